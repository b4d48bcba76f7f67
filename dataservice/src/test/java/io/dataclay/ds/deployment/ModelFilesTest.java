package io.dataclay.ds.deployment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

  @Test
  void deleting_a_module_deletes_what_python_compiled_from_it_and_the_directories_left_empty() throws Exception {
    // setup: a module, its compiled form, and a sibling module of another namespace in another package
    Path root = tmp.resolve("models");
    ModelFiles files = new ModelFiles(root);
    Path module = files.target("shop/items.py", "path");
    Path kept = files.target("tools/util.py", "path");
    files.write(module, "class Item: pass\n".getBytes());
    files.write(kept, "x = 1\n".getBytes());
    Path compiled = Files.createDirectories(root.resolve("shop/__pycache__")).resolve("items.cpython-311.pyc");
    Files.write(compiled, new byte[] {1, 2, 3});
    // run
    files.delete(module);
    // verify
    assertFalse(Files.exists(root.resolve("shop")));
    assertTrue(Files.exists(kept));
  }

  @Test
  void retaining_only_the_installed_files_deletes_everything_else_under_the_directory() throws Exception {
    // setup: files left by a model removed while the backend was down, with compiled forms
    Path root = tmp.resolve("models");
    ModelFiles files = new ModelFiles(root);
    Path kept = files.target("tools/util.py", "path");
    Path stale = files.target("gone/secret.py", "path");
    files.write(kept, "x = 1\n".getBytes());
    files.write(stale, "code = 'gone'\n".getBytes());
    Path keptCompiled = Files.createDirectories(root.resolve("tools/__pycache__")).resolve("util.cpython-311.pyc");
    Path staleCompiled = Files.createDirectories(root.resolve("gone/__pycache__")).resolve("secret.cpython-311.pyc");
    Files.write(keptCompiled, new byte[] {1});
    Files.write(staleCompiled, new byte[] {2});
    // run
    List<String> deleted = files.retainOnly(java.util.Set.of(kept));
    // verify
    assertEquals(List.of("gone/__pycache__/secret.cpython-311.pyc", "gone/secret.py"),
        deleted.stream().sorted().toList());
    assertFalse(Files.exists(root.resolve("gone")));
    assertTrue(Files.exists(kept) && Files.exists(keptCompiled));
  }

  @Test
  void deleting_through_a_symbolic_link_leading_out_of_the_directory_is_refused() throws Exception {
    // setup
    Path root = Files.createDirectories(tmp.resolve("models"));
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    Files.write(outside.resolve("precious.py"), new byte[] {1});
    Files.createSymbolicLink(root.resolve("pkg"), outside);
    ModelFiles files = new ModelFiles(root);
    // run
    assertThrows(InvalidArgumentException.class, () -> files.delete(files.target("pkg/precious.py", "path")));
    // verify
    assertTrue(Files.exists(outside.resolve("precious.py")));
  }
}
