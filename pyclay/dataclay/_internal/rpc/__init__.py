"""The wrappers around the generated gRPC stubs (the only code in pyclay that touches them), and the
execution environment's framed Unix-socket link to its Data Service."""
from dataclay._internal.rpc.channels import SESSION_KEY, open_channel
from dataclay._internal.rpc.dataservice import DataServiceClient
from dataclay._internal.rpc.errors import ERROR_TRAILER, abort_with, error_from_info, error_info_for, error_from_rpc
from dataclay._internal.rpc.link_frames import DataServiceLink, LinkClosedError, LinkProtocolError
from dataclay._internal.rpc.logicmodule import LogicModuleClient

__all__ = ["DataServiceClient", "DataServiceLink", "LinkClosedError", "LinkProtocolError", "LogicModuleClient",
           "ERROR_TRAILER", "SESSION_KEY", "open_channel", "abort_with", "error_from_info", "error_info_for",
           "error_from_rpc"]
