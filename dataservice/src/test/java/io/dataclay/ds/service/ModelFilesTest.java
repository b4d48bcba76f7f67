package io.dataclay.ds.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelFilesTest {
  @TempDir Path tmp;

  @Test
  void unsafe_paths_are_refused_naming_the_field() {
    ModelFiles files = new ModelFiles(tmp.resolve("models"));
    for (String bad : List.of("", "/etc/passwd", "../x.py", "a/../../x.py", "a/./b.py")) {
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> files.target(bad, "models[0].files[3].path"), bad);
      assertTrue(e.getMessage().startsWith("models[0].files[3].path"), e.getMessage());
    }
  }

  @Test
  void a_symbolic_link_leading_out_of_the_directory_is_refused() throws Exception {
    // setup
    Path root = tmp.resolve("models");
    Files.createDirectories(root);
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    Files.createSymbolicLink(root.resolve("pkg"), outside);
    ModelFiles files = new ModelFiles(root);
    // run
    Path target = files.target("pkg/evil.py", "path");
    assertThrows(InvalidArgumentException.class, () -> files.write(target, new byte[] {1}));
    // verify
    try (Stream<Path> s = Files.list(outside)) {
      assertEquals(0, s.count());
    }
  }

  @Test
  void a_write_replaces_the_file_whole_and_leaves_no_temporary_file() throws Exception {
    // setup
    ModelFiles files = new ModelFiles(tmp.resolve("models"));
    Path target = files.target("WordCount/classes.py", "path");
    files.write(target, "old = 1\n".getBytes());
    // run
    files.write(target, "new = 2\n".getBytes());
    // verify
    assertArrayEquals("new = 2\n".getBytes(), Files.readAllBytes(target));
    try (Stream<Path> s = Files.list(target.getParent())) {
      assertEquals(List.of(target), s.toList());
    }
  }
}
