"""The local launcher behind `dataclay start/stop/status/logs/erase`: servers, certificates, prerequisites."""
