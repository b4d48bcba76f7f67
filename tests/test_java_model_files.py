"""`dataclaycmd NewModel ... java` reading Java models: class files under a directory or in a jar,
the DataClayObject subclasses found from the class-file headers (nothing is loaded or run)."""
import pathlib
import shutil
import subprocess
import zipfile

import pytest

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.admin.java_model import read_java_model

ROOT = pathlib.Path(__file__).resolve().parent.parent
JAVACLAY_CLASSES = ROOT / "javaclay" / "target" / "classes"

SOURCES = {
    "shop/Item.java": """
        package shop;
        public class Item extends io.dataclay.api.DataClayObject {
            private String name;
            protected long[] prices;
            private transient int cache;
            static int created;
            public Item(String name) { this.name = name; }
            public String getName() { return name; }
            public void rename(String to) { name = to; }
            private void hidden() {}
            public static Item of(String n) { return new Item(n); }
        }""",
    "shop/Special.java": """
        package shop;
        public class Special extends Item {
            java.util.List<String> tags;
            public Special() { super("special"); }
        }""",
    "shop/Helper.java": """
        package shop;
        public final class Helper { public static int twice(int x) { return 2 * x; } }""",
}


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> pathlib.Path:
    """The sources above compiled against javaclay."""
    if shutil.which("javac") is None or not JAVACLAY_CLASSES.is_dir():
        pytest.fail("needs javac and javaclay built (make build)")
    src = tmp_path_factory.mktemp("java-src")
    out = tmp_path_factory.mktemp("java-classes")
    for name, text in SOURCES.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    subprocess.run(["javac", "-d", str(out), "-cp", str(JAVACLAY_CLASSES), *map(str, src.rglob("*.java"))],
                   check=True, timeout=120)
    return out


def test_model_classes_under_a_directory_are_described_and_every_class_file_is_sent(classes):
    # run
    model = read_java_model("shop", str(classes))
    # verify
    assert sorted(f.path for f in model.files) == ["shop/Helper.class", "shop/Item.class", "shop/Special.class"]
    described = {c.name: c for c in model.classes}
    assert sorted(described) == ["shop.Item", "shop.Special"]
    item = described["shop.Item"]
    assert [(f.name, f.type) for f in item.fields] == [("name", "java.lang.String"), ("prices", "long[]")]
    assert {m.signature for m in item.methods} == {"getName()Ljava/lang/String;", "rename(Ljava/lang/String;)V"}
    assert [(f.name, f.type) for f in described["shop.Special"].fields] == [("tags", "java.util.List")]
    assert model.language == 2  # JAVA


def test_a_jar_is_read_like_a_directory(classes, tmp_path):
    # setup
    jar = tmp_path / "shop.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        for path in classes.rglob("*.class"):
            z.write(path, path.relative_to(classes).as_posix())
    # run
    model = read_java_model("shop", str(jar))
    # verify
    assert sorted(f.path for f in model.files) == ["shop/Helper.class", "shop/Item.class", "shop/Special.class"]
    assert sorted(c.name for c in model.classes) == ["shop.Item", "shop.Special"]


def test_a_file_that_is_not_a_class_file_is_refused_naming_it(tmp_path):
    # setup
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "Broken.class").write_bytes(b"\xca\xfe\xba\xbe\x00")
    # run
    with pytest.raises(InvalidArgumentError) as e:
        read_java_model("bad", str(tmp_path))
    # verify
    assert "bad/Broken.class" in str(e.value)
    assert "nothing was registered" in str(e.value)


def test_classes_without_a_dataclay_object_subclass_are_refused(classes, tmp_path):
    # setup
    shutil.copy(classes / "shop" / "Helper.class", tmp_path / "Helper.class")
    # run
    with pytest.raises(InvalidArgumentError) as e:
        read_java_model("none", str(tmp_path))
    # verify
    assert "DataClayObject" in str(e.value)


def test_a_class_path_that_is_neither_a_directory_nor_a_jar_is_refused(tmp_path):
    # setup
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    # run
    with pytest.raises(InvalidArgumentError) as e:
        read_java_model("x", str(text))
    # verify
    assert "neither a directory nor a jar" in str(e.value)
