package io.dataclay.ds.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class StoreConfigTest {
  @Test
  void parseSizeReadsByteCountsAndBinarySuffixes() {
    assertEquals(1_048_576L, StoreConfig.parseSize("1048576"));
    assertEquals(512L << 20, StoreConfig.parseSize("512M"));
    assertEquals(4L << 30, StoreConfig.parseSize("4G"));
    assertEquals(64L << 10, StoreConfig.parseSize("64k"));
    assertEquals(2L << 40, StoreConfig.parseSize("2T"));
    assertEquals(1L << 30, StoreConfig.parseSize(" 1GiB "));
    assertEquals(256L << 20, StoreConfig.parseSize("256MB"));
    assertEquals(100L, StoreConfig.parseSize("100B"));
  }

  @Test
  void parseSizeRefusesNonsenseNamingTheText() {
    for (String bad : new String[] {"", "  ", "M", "-1G", "1.5G", "12X", "G4", "0", "0M", "99999999999T",
        "9223372036854775808"}) {
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> StoreConfig.parseSize(bad),
          "'" + bad + "' was accepted");
      assertTrue(e.getMessage().contains("size"), e.getMessage());
    }
    assertThrows(InvalidArgumentException.class, () -> StoreConfig.parseSize(null));
  }

  @Test
  void aConfigWithoutEngineOrWithANonPositiveSizeIsRefused() {
    Path path = Path.of("/dev/shm/unused");

    InvalidArgumentException noEngine =
        assertThrows(InvalidArgumentException.class, () -> new StoreConfig(" ", path, 1 << 30));
    InvalidArgumentException zero = assertThrows(InvalidArgumentException.class, () -> new StoreConfig("kv", path, 0));

    assertTrue(noEngine.getMessage().contains("kv, heap, 2lm, postgres, memory"), noEngine.getMessage());
    assertTrue(zero.getMessage().contains("size"), zero.getMessage());
  }
}
