"""The launcher's path checks: what it makes is its user's alone (0700 / 0600), and a path another
user owns or could reach, or could replace, is refused with a message naming it and the fix.
Another user is simulated with os.chown to an unused uid (the suite runs as root)."""
import os
import pathlib
import stat

import pytest

from dataclay._internal.private_paths import (
    UnsafePathError, check_ancestors, check_private_dir, check_tree, ensure_private_dir, open_private, read_private)

STRANGER = 54321  # a uid no account has
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="simulating another user needs root (os.chown)")


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_missing_directory_and_its_missing_parents_are_made_0700(tmp_path):
    # run
    made = ensure_private_dir(tmp_path / "a" / "b" / "home", "DATACLAY_HOME")
    # verify
    assert made == tmp_path / "a" / "b" / "home"
    assert [_mode(tmp_path / p) for p in ("a", "a/b", "a/b/home")] == [0o700, 0o700, 0o700]


def test_an_existing_directory_others_may_read_is_refused_with_the_chmod_to_run(tmp_path):
    # setup: a home an earlier release left 0755
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    # run
    with pytest.raises(UnsafePathError) as refused:
        ensure_private_dir(home, "DATACLAY_HOME")
    # verify: refused, named, and left as it was
    assert f"DATACLAY_HOME {home} has mode 0755" in str(refused.value)
    assert f"run `chmod 700 {home}`" in str(refused.value)
    assert _mode(home) == 0o755


@as_root
def test_a_directory_another_user_owns_is_refused_naming_the_owner(tmp_path):
    # setup
    planted = tmp_path / "pools"
    planted.mkdir(mode=0o700)
    os.chown(planted, STRANGER, STRANGER)
    # run
    with pytest.raises(UnsafePathError) as refused:
        ensure_private_dir(planted, "the pools' directory")
    # verify
    assert f"the pools' directory {planted} is owned by uid {STRANGER}, not by you" in str(refused.value)
    assert "remove it" in str(refused.value)


@as_root
def test_a_link_another_user_owns_is_refused_and_one_of_yours_is_followed(tmp_path):
    # setup
    target = tmp_path / "real"
    target.mkdir(mode=0o700)
    theirs, mine = tmp_path / "theirs", tmp_path / "mine"
    theirs.symlink_to(target)
    os.lchown(theirs, STRANGER, STRANGER)
    mine.symlink_to(target)
    # run
    with pytest.raises(UnsafePathError) as refused:
        check_private_dir(theirs, "DATACLAY_HOME")
    followed = check_private_dir(mine, "DATACLAY_HOME")
    # verify
    assert f"{theirs} is a symbolic link owned by uid {STRANGER}" in str(refused.value)
    assert followed == target


def test_a_path_inside_a_directory_others_may_write_is_refused_unless_it_is_sticky(tmp_path):
    # setup
    shared, sticky = tmp_path / "shared", tmp_path / "sticky"
    shared.mkdir()
    shared.chmod(0o777)
    sticky.mkdir()
    sticky.chmod(0o1777)
    # run
    with pytest.raises(UnsafePathError) as refused:
        check_ancestors(shared / "pools", "DATACLAY_STORE_PATH")
    check_ancestors(sticky / "pools", "DATACLAY_STORE_PATH")
    # verify
    assert f"is inside {shared} (mode 0777), which others may write without the sticky bit" in str(refused.value)


@as_root
def test_a_path_inside_another_users_directory_is_refused(tmp_path):
    # setup
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, STRANGER, STRANGER)
    # run
    with pytest.raises(UnsafePathError) as refused:
        ensure_private_dir(theirs / "home", "DATACLAY_HOME")
    # verify: nothing made in it
    assert f"is inside {theirs}, which uid {STRANGER} owns" in str(refused.value)
    assert list(theirs.iterdir()) == []


@as_root
def test_the_tree_check_lists_every_reachable_or_foreign_entry_and_the_commands_that_fix_them(tmp_path):
    # setup
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True, mode=0o700)
    home.chmod(0o700)
    (home / "logs").chmod(0o755)
    (home / "logs" / "lm.log").write_text("x")
    (home / "logs" / "lm.log").chmod(0o644)
    (home / "cluster.json").write_text("{}")
    os.chown(home / "cluster.json", STRANGER, STRANGER)
    (home / "cluster.json").chmod(0o600)
    (home / "stubs").mkdir(mode=0o755)  # the user's own: not named, so not checked
    (home / "stubs").chmod(0o755)
    # run
    with pytest.raises(UnsafePathError) as refused:
        check_tree(home, "DATACLAY_HOME", ("logs", "cluster.json", "tls"))
    # verify
    message = str(refused.value)
    assert f"{home / 'logs'} (mode 0755)" in message and f"{home / 'logs' / 'lm.log'} (mode 0644)" in message
    assert f"{home / 'cluster.json'} (owned by uid {STRANGER})" in message
    assert f"run `chmod -R go= {home}`" in message and "remove what another user owns" in message
    assert "stubs" not in message


def test_a_private_file_is_made_0600_and_a_link_or_a_readable_file_is_refused(tmp_path):
    # setup
    loose = tmp_path / "loose.log"
    loose.write_text("old")
    loose.chmod(0o644)
    link = tmp_path / "link.log"
    link.symlink_to(tmp_path / "elsewhere.log")
    # run
    os.close(open_private(tmp_path / "new.log"))
    with pytest.raises(UnsafePathError) as readable:
        open_private(loose)
    with pytest.raises(UnsafePathError) as linked:
        open_private(link)
    # verify
    assert _mode(tmp_path / "new.log") == 0o600
    assert f"run `chmod 600 {loose}`" in str(readable.value)
    assert "a symbolic link is refused there" in str(linked.value)
    assert not (tmp_path / "elsewhere.log").exists()
    assert read_private(tmp_path / "new.log") == b""
    with pytest.raises(UnsafePathError):
        read_private(loose)
