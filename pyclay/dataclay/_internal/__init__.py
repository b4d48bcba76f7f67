"""Everything behind the public `dataclay` surface: configuration, protocol wrappers, object
model, serialisation, client runtime and the Python execution environment."""
import os

# gRPC Python's EventEngine client adds latency to every unary call: measured on the 2-core
# development VM against a Java server, p50 184 us without it vs 272-320 us with it (and 277-338 vs
# 335-417 us under heavy load). It only takes effect if set before grpc is first imported, which is
# why it lives here, ahead of every module that imports grpc; a GRPC_EXPERIMENTS the user set wins.
os.environ.setdefault("GRPC_EXPERIMENTS", "-event_engine_client")
