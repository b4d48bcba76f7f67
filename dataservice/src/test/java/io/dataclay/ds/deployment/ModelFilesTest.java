package io.dataclay.ds.deployment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
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
    Path module = module(files, "shop/items.py", "class Item: pass\n");
    Path kept = module(files, "tools/util.py", "x = 1\n");
    compiled(module, (byte) 1, (byte) 2, (byte) 3);
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
    Path kept = module(files, "tools/util.py", "x = 1\n");
    Path stale = module(files, "gone/secret.py", "code = 'gone'\n");
    Path keptCompiled = compiled(kept, (byte) 1);
    compiled(stale, (byte) 2);
    // run
    List<String> deleted = files.retainOnly(java.util.Set.of(kept));
    // verify
    assertEquals(List.of("gone/__pycache__/secret.cpython-311.pyc", "gone/secret.py"),
        deleted.stream().sorted().toList());
    assertFalse(Files.exists(root.resolve("gone")));
    assertTrue(Files.exists(kept) && Files.exists(keptCompiled));
  }

  /** Writes {@code code} as the module at {@code path} (relative to {@code files}' directory); returns its file. */
  private static Path module(ModelFiles files, String path, String code) {
    Path file = files.target(path, "path");
    files.write(file, code.getBytes());
    return file;
  }

  /** Writes {@code content} where Python 3.11 caches {@code module} compiled (in __pycache__); returns that file. */
  private static Path compiled(Path module, byte... content) throws IOException {
    String name = module.getFileName().toString().replace(".py", ".cpython-311.pyc");
    return Files.write(Files.createDirectories(module.resolveSibling("__pycache__")).resolve(name), content);
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
