"""The local cluster's certificates: a private CA and server certificates, every file readable by
its owner only and the CA's key outside the cluster home, kept across starts while they are good,
replaced when they are about to expire."""
import datetime
import stat

from cryptography import x509

from dataclay._internal.cli.local import certificates
from dataclay._internal.cli.local.certificates import ClusterCertificates


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_ca_and_a_server_certificate_are_made_with_private_keys_mode_0600(tmp_path):
    # run
    certs = ClusterCertificates(tmp_path / "tls", tmp_path / "ca-key")
    certs.ensure_ca()
    pair = certs.server("backend-1")
    # verify
    assert _mode(tmp_path / "tls") == 0o700 and _mode(tmp_path / "ca-key") == 0o700
    assert not (tmp_path / "tls" / "ca.key").exists()
    assert _mode(tmp_path / "ca-key" / "ca.key") == 0o600 and _mode(pair.key) == 0o600
    assert _mode(certs.ca_file) == 0o600 and _mode(pair.cert) == 0o600
    cert = x509.load_pem_x509_certificate(pair.cert.read_bytes())
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(certs.ca_file.read_bytes()))
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {str(ip) for ip in names.get_values_for_type(x509.IPAddress)} == {"127.0.0.1", "::1"}
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert {u.dotted_string for u in usages} == {"1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"}  # server and client


def test_a_later_start_keeps_the_ca_and_good_certificates(tmp_path):
    # setup
    certs = ClusterCertificates(tmp_path / "tls", tmp_path / "ca-key")
    certs.ensure_ca()
    first = certs.server("logicmodule").cert.read_bytes()
    ca = certs.ca_file.read_bytes()
    # run
    again = ClusterCertificates(tmp_path / "tls", tmp_path / "ca-key")
    again.ensure_ca()
    # verify
    assert again.ca_file.read_bytes() == ca
    assert again.server("logicmodule").cert.read_bytes() == first


def test_a_certificate_about_to_expire_or_missing_a_host_is_replaced(tmp_path, monkeypatch):
    # setup: a certificate that expires in 10 days
    certs = ClusterCertificates(tmp_path / "tls", tmp_path / "ca-key")
    certs.ensure_ca()
    monkeypatch.setattr(certificates, "SERVER_DAYS", 10)
    short = certs.server("backend-1").cert.read_bytes()
    monkeypatch.undo()
    # run
    renewed = certs.server("backend-1").cert.read_bytes()
    wider = certs.server("backend-1", hosts=("127.0.0.1", "node7.example")).cert.read_bytes()
    # verify
    left = x509.load_pem_x509_certificate(renewed).not_valid_after_utc - datetime.datetime.now(datetime.timezone.utc)
    assert renewed != short and left.days > 30
    assert wider != renewed
    assert "node7.example" in x509.load_pem_x509_certificate(wider).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)


def test_a_ca_key_an_earlier_release_left_in_the_home_is_moved_out_and_still_issues(tmp_path):
    # setup: the layout before release 21, the CA key beside ca.pem
    old = ClusterCertificates(tmp_path / "tls", tmp_path / "tls")
    old.ensure_ca()
    key = (tmp_path / "tls" / "ca.key").read_bytes()
    ca = old.ca_file.read_bytes()
    # run
    certs = ClusterCertificates(tmp_path / "tls", tmp_path / "ca-key")
    certs.ensure_ca()
    pair = certs.server("backend-3")
    # verify
    assert not (tmp_path / "tls" / "ca.key").exists()
    assert certs.ca_key_file.read_bytes() == key and certs.ca_file.read_bytes() == ca
    x509.load_pem_x509_certificate(pair.cert.read_bytes()).verify_directly_issued_by(
        x509.load_pem_x509_certificate(ca))


def test_erasing_the_ca_key_removes_its_directory(tmp_path):
    certs = ClusterCertificates(tmp_path / "tls", tmp_path / "ca-key")
    certs.ensure_ca()
    lines = certs.erase_ca_key()
    assert not (tmp_path / "ca-key").exists()
    assert lines and str(tmp_path / "ca-key") in lines[0]
