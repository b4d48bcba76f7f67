package io.dataclay.ds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.dataclay.ds.store.StoreEngines;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ConfigurationReportTest {
  @Test
  void enginesJsonListsEveryRegisteredEngineInOrderWithItsPromiseAndSettings() {
    // run
    JsonArray engines = jsonReport("engines");

    // verify
    List<String> names = new ArrayList<>();
    for (JsonElement e : engines) {
      JsonObject engine = e.getAsJsonObject();
      assertEquals(Set.of("name", "durability", "description", "settings"), engine.keySet());
      names.add(engine.get("name").getAsString());
      assertTrue(!engine.get("durability").getAsString().isBlank());
      assertTrue(!engine.get("description").getAsString().isBlank());
      engine.get("settings").getAsJsonArray().forEach(ConfigurationReportTest::assertSetting);
    }
    assertEquals(List.of("kv", "heap", "2lm", "postgres", "memory"), names);
    assertEquals(StoreEngines.names(), names);
    JsonObject twoLevel = engines.get(2).getAsJsonObject();
    JsonObject cache = twoLevel.get("settings").getAsJsonArray().get(0).getAsJsonObject();
    assertEquals("DATACLAY_2LM_CACHE_SIZE", cache.get("key").getAsString());
    assertEquals("256M", cache.get("default").getAsString());
    JsonObject url = engines.get(3).getAsJsonObject().get("settings").getAsJsonArray().get(0).getAsJsonObject();
    assertEquals("DATACLAY_STORE_URL", url.get("key").getAsString());
    assertEquals("", url.get("default").getAsString());
  }

  @Test
  void settingsJsonIsTheWholeTableWithEngineKeysOnceAndDefaultsAsTheyAreRead() {
    // run
    JsonArray settings = jsonReport("settings");

    // verify
    List<String> keys = new ArrayList<>();
    for (JsonElement e : settings) {
      assertSetting(e);
      keys.add(e.getAsJsonObject().get("key").getAsString());
    }
    assertEquals(keys.size(), Set.copyOf(keys).size(), "a key listed twice: " + keys);
    assertEquals(DataServiceConfig.SETTINGS.size(), keys.size());
    assertTrue(keys.containsAll(List.of("DATACLAY_STORE", "DATACLAY_STORE_SIZE", "DATACLAY_STORE_URL",
        "DATACLAY_2LM_CACHE_SIZE", "DATACLAY_2LM_CHECKPOINT_MS", "DATACLAY_QUOTA_OBJECTS")), keys.toString());
    assertEquals("kv", defaultOf(settings, "DATACLAY_STORE"));
    assertEquals("1G", defaultOf(settings, "DATACLAY_STORE_SIZE"));
    assertEquals("11034", defaultOf(settings, "DATACLAY_PORT"));
  }

  @Test
  void theTablesForPeopleNameEveryEngineAndKey() {
    // run
    String engines = ConfigurationReport.forArguments(new String[] {"engines"});
    String settings = ConfigurationReport.forArguments(new String[] {"settings"});

    // verify
    for (String name : StoreEngines.names()) {
      assertTrue(engines.contains(name + ": "), engines);
    }
    DataServiceConfig.SETTINGS.forEach(s -> assertTrue(settings.contains(s.key()), s.key()));
  }

  @Test
  void otherArgumentsAskForNoReport() {
    assertNull(ConfigurationReport.forArguments(new String[] {}));
    assertNull(ConfigurationReport.forArguments(new String[] {"engines", "--yaml"}));
    assertNull(ConfigurationReport.forArguments(new String[] {"start"}));
  }

  /** The {@code report} ("engines" or "settings") as {@code dataservice.jar <report> --json} prints it. */
  private static JsonArray jsonReport(String report) {
    return JsonParser.parseString(ConfigurationReport.forArguments(new String[] {report, "--json"})).getAsJsonArray();
  }

  private static void assertSetting(JsonElement e) {
    JsonObject s = e.getAsJsonObject();
    assertEquals(Set.of("key", "default", "meaning"), s.keySet());
    assertTrue(s.get("key").getAsString().startsWith("DATACLAY_"), s.toString());
    assertTrue(s.get("default").isJsonPrimitive() && s.get("default").getAsJsonPrimitive().isString(), s.toString());
    assertTrue(!s.get("meaning").getAsString().isBlank(), s.toString());
  }

  private static String defaultOf(JsonArray settings, String key) {
    for (JsonElement e : settings) {
      if (e.getAsJsonObject().get("key").getAsString().equals(key)) {
        return e.getAsJsonObject().get("default").getAsString();
      }
    }
    throw new AssertionError(key + " is not listed");
  }
}
