"""A protocol fuzzer for dataClay's two gRPC services, shared by the short run in `make test`
(tests/test_fuzz_rpcs.py) and the long run (`python -m fuzz.run`, see tests/fuzz/README.md).

It sends mutated, generated and garbage messages to every RPC that the generated service
descriptors list, under several identities, plus a fixed corpus of crafted pickles and Kryo
payloads, and after each message checks that the servers are alive, that the answer is a typed
dataClay error (or a success that identity may have), that no crafted payload ran code, and, after
each small batch, that known-good calls still answer and the logs hold no stack trace."""
