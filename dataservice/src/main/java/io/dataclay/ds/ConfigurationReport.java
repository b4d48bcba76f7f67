package io.dataclay.ds;

import com.google.gson.GsonBuilder;
import io.dataclay.ds.store.Setting;
import io.dataclay.ds.store.StoreEngine;
import io.dataclay.ds.store.StoreEngines;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code java -jar dataservice.jar engines|settings [--json]} prints: the store engine
 * registry and the Data Service's configuration table, for people (a table) and for the Python
 * CLI and tests (JSON). Needs no environment and no cluster.
 *
 * <p>JSON shapes: engines is {@code [{"name", "durability", "description", "settings": [SETTING]}]}
 * in registry order; settings is {@code [SETTING]} in table order; SETTING is
 * {@code {"key", "default", "meaning"}}, every value a string ("" for no default).
 */
final class ConfigurationReport {
  private ConfigurationReport() {}

  /**
   * The report {@code args} ask for ({@code engines} or {@code settings}, optionally followed by
   * {@code --json}), or null when they ask for none of them (the Data Service then starts).
   */
  static String forArguments(String[] args) {
    if (args.length == 0 || args.length > 2 || (args.length == 2 && !args[1].equals("--json"))) {
      return null;
    }
    boolean json = args.length == 2;
    return switch (args[0]) {
      case "engines" -> json ? enginesJson() : enginesTable();
      case "settings" -> json ? settingsJson() : settingsTable(DataServiceConfig.SETTINGS);
      default -> null;
    };
  }

  /** The registry as JSON, in registry order. */
  static String enginesJson() {
    List<Map<String, Object>> out = new ArrayList<>();
    for (StoreEngine engine : StoreEngines.ALL) {
      Map<String, Object> e = new LinkedHashMap<>();
      e.put("name", engine.name());
      e.put("durability", engine.durability());
      e.put("description", engine.description());
      e.put("settings", settingsList(engine.settings()));
      out.add(e);
    }
    return toJson(out);
  }

  /** The configuration table as JSON, in table order. */
  static String settingsJson() {
    return toJson(settingsList(DataServiceConfig.SETTINGS));
  }

  private static List<Map<String, String>> settingsList(List<Setting> settings) {
    List<Map<String, String>> out = new ArrayList<>();
    for (Setting s : settings) {
      Map<String, String> m = new LinkedHashMap<>();
      m.put("key", s.key());
      m.put("default", s.defaultValue());
      m.put("meaning", s.meaning());
      out.add(m);
    }
    return out;
  }

  private static String toJson(Object value) {
    return new GsonBuilder().disableHtmlEscaping().setPrettyPrinting().create().toJson(value);
  }

  private static String enginesTable() {
    StringBuilder out = new StringBuilder();
    for (StoreEngine engine : StoreEngines.ALL) {
      out.append(engine.name()).append(": ").append(engine.description()).append('\n');
      out.append("  durability: ").append(engine.durability()).append('\n');
      for (Setting s : engine.settings()) {
        out.append("  ").append(s.key()).append(s.defaultValue().isEmpty() ? "" : " (default " + s.defaultValue() + ")")
            .append(": ").append(s.meaning()).append('\n');
      }
    }
    return out.toString().stripTrailing();
  }

  private static String settingsTable(List<Setting> settings) {
    int width = settings.stream().mapToInt(s -> s.key().length()).max().orElse(0);
    int defaultWidth = Math.max("default".length(), settings.stream().mapToInt(s -> s.defaultValue().length()).max().orElse(0));
    StringBuilder out = new StringBuilder();
    out.append(String.format("%-" + width + "s  %-" + defaultWidth + "s  %s%n", "key", "default", "meaning"));
    for (Setting s : settings) {
      out.append(String.format("%-" + width + "s  %-" + defaultWidth + "s  %s%n", s.key(),
          s.defaultValue().isEmpty() ? "-" : s.defaultValue(), s.meaning()));
    }
    return out.toString().stripTrailing();
  }
}
