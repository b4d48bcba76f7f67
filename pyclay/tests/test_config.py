"""Configuration: file and environment precedence, defaults and bad values."""
import pathlib

import pytest

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.config import DEFAULT_PORT, Config, EnvironmentConfig


def write(path: pathlib.Path, text: str) -> pathlib.Path:
    path.write_text(text)
    return path


def test_defaults_apply_without_file_or_environment(tmp_path):
    config = Config.load(env={"DATACLAY_HOME": str(tmp_path)})
    assert (config.host, config.port, config.user, config.dataset, config.pickle_allow, config.source) == \
        ("127.0.0.1", DEFAULT_PORT, None, "", (), None)
    assert config.home == tmp_path


def test_client_properties_in_dataclay_home_is_read_by_default(tmp_path):
    write(tmp_path / "client.properties", "# written by dataclay start\nDATACLAY_HOST=10.0.0.5\nDATACLAY_PORT=2000\n"
                                          "DATACLAY_USER=admin\nDATACLAY_PASSWORD=pw=with=equals\n")
    config = Config.load(env={"DATACLAY_HOME": str(tmp_path)})
    assert (config.host, config.port, config.user, config.password) == ("10.0.0.5", 2000, "admin", "pw=with=equals")
    assert config.source == str(tmp_path / "client.properties")


def test_environment_overrides_the_file_and_empty_variables_do_not(tmp_path):
    path = write(tmp_path / "my.cfg", "DATACLAY_PORT=2000\nDATACLAY_USER=fromfile\nDATACLAY_DATASET=ds1\n")
    config = Config.load(path, env={"DATACLAY_PORT": "3000", "DATACLAY_USER": "", "OTHER": "x"})
    assert (config.port, config.user, config.dataset) == (3000, "fromfile", "ds1")


def test_explicit_file_wins_over_the_default_file(tmp_path):
    write(tmp_path / "client.properties", "DATACLAY_PORT=2000\n")
    explicit = write(tmp_path / "other.properties", "DATACLAY_PORT=4000\n")
    assert Config.load(explicit, env={"DATACLAY_HOME": str(tmp_path)}).port == 4000


def test_pickle_allow_is_parsed(tmp_path):
    config = Config.load(env={"DATACLAY_HOME": str(tmp_path), "DATACLAY_PICKLE_ALLOW": " numpy.dtype, a.b.c ,"})
    assert config.pickle_allow == ("numpy.dtype", "a.b.c")


def test_an_execution_environment_reads_its_keys_from_the_data_service_only(tmp_path):
    write(tmp_path / "client.properties", "DATACLAY_USER=admin\nDATACLAY_PASSWORD=admin-password\n")
    config = EnvironmentConfig.load({"DATACLAY_HOME": str(tmp_path), "DATACLAY_EE_BACKEND_ID": "b",
                                     "DATACLAY_EE_THREADS": "4", "DATACLAY_EE_PICKLE_ALLOW": "numpy.dtype",
                                     "DATACLAY_PASSWORD": "not-read"})
    assert config == EnvironmentConfig(backend_id="b", threads=4, pickle_allow=("numpy.dtype",))
    assert not hasattr(config, "password") and not hasattr(config, "user")


@pytest.mark.parametrize("env, message", [
    ({}, "DATACLAY_EE_BACKEND_ID is not set"),
    ({"DATACLAY_EE_BACKEND_ID": "b", "DATACLAY_EE_THREADS": "0"}, "DATACLAY_EE_THREADS must be a positive integer"),
    ({"DATACLAY_EE_BACKEND_ID": "b", "DATACLAY_EE_PICKLE_ALLOW": "os"}, "must be module.name"),
])
def test_bad_execution_environment_keys_are_refused_naming_the_key(env, message):
    with pytest.raises(InvalidArgumentError, match=message):
        EnvironmentConfig.load(env)


@pytest.mark.parametrize("key, value, message", [
    ("DATACLAY_PORT", "eleven", "DATACLAY_PORT must be a port number"),
    ("DATACLAY_PORT", "70000", "DATACLAY_PORT must be a port number"),
    ("DATACLAY_PICKLE_ALLOW", "os", "DATACLAY_PICKLE_ALLOW entries must be module.name"),
])
def test_bad_values_name_the_key_and_the_file(tmp_path, key, value, message):
    path = write(tmp_path / "bad.properties", f"{key}={value}\n")
    with pytest.raises(InvalidArgumentError, match=message) as caught:
        Config.load(path, env={})
    assert str(path) in str(caught.value)


def test_malformed_line_and_missing_file_are_reported(tmp_path):
    path = write(tmp_path / "bad.properties", "DATACLAY_PORT=1\njust words\n")
    with pytest.raises(InvalidArgumentError, match=r"bad.properties:2: expected KEY=VALUE"):
        Config.load(path, env={})
    with pytest.raises(InvalidArgumentError, match="does not exist"):
        Config.load(tmp_path / "missing.properties", env={})


def test_dataclay_4_keys_from_the_environment_and_a_dotenv_file_are_read(tmp_path, monkeypatch):
    # setup: a dataClay 4 program's working directory, with its .env, and a home with a client file
    monkeypatch.chdir(tmp_path)
    write(tmp_path / ".env", "# the program's own settings too\nAPP_MODE=test\nexport DC_HOST=10.0.0.9\n"
                             "DC_USERNAME='dora'\nDC_PASSWORD=\"pw with spaces\"\nDC_DATASET=dora\nnot a setting\n")
    home = tmp_path / "home"
    home.mkdir()
    write(home / "client.properties", "DATACLAY_PORT=2000\nDATACLAY_USER=fromfile\n")
    # run
    from_dotenv = Config.load(env={"DATACLAY_HOME": str(home)})
    from_env = Config.load(env={"DATACLAY_HOME": str(home), "DC_PORT": "3000", "DC_USERNAME": "erin"})
    ours_win = Config.load(env={"DATACLAY_HOME": str(home), "DC_USERNAME": "erin", "DATACLAY_USER": "fay"})
    # verify: .env over the client file, DC_* variables over .env, DATACLAY_* over DC_*
    assert (from_dotenv.host, from_dotenv.port, from_dotenv.user, from_dotenv.password, from_dotenv.dataset) == \
        ("10.0.0.9", 2000, "dora", "pw with spaces", "dora")
    assert (from_env.port, from_env.user) == (3000, "erin")
    assert ours_win.user == "fay"


def test_without_a_dotenv_file_nothing_changes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = Config.load(env={"DATACLAY_HOME": str(tmp_path)})
    assert (config.host, config.user) == ("127.0.0.1", None)
