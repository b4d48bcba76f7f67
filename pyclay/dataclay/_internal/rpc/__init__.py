"""The wrappers around the generated gRPC stubs: the only code in pyclay that touches them."""
from dataclay._internal.rpc.channels import EE_SECRET_KEY, SESSION_KEY, open_channel
from dataclay._internal.rpc.dataservice import DataServiceClient
from dataclay._internal.rpc.errors import ERROR_TRAILER, abort_with, error_from_info, error_info_for, error_from_rpc
from dataclay._internal.rpc.link import EnvironmentLinkClient
from dataclay._internal.rpc.logicmodule import LogicModuleClient

__all__ = ["DataServiceClient", "EnvironmentLinkClient", "LogicModuleClient", "ERROR_TRAILER", "SESSION_KEY",
           "EE_SECRET_KEY", "open_channel", "abort_with", "error_from_info", "error_info_for", "error_from_rpc"]
