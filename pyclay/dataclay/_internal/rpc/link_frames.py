"""The execution environment's end of its link to the Data Service: length-prefixed protobuf frames
(rpc/framing.py) over the process's standard input (from the Data Service) and standard output (to
it). Each frame is a 4-byte unsigned big-endian length N (at most 2^31-1) and N bytes of one
serialised message: DataServiceMessage from the Data Service, EnvironmentMessage from the environment. The messages the
environment sends are built here from plain values, and the answers it waits for are read here into
records, so the session above (ee/link_session.py) imports no generated module."""
from __future__ import annotations

import os
import sys
import threading

from google.protobuf.message import DecodeError

from dataclay.exceptions import SerializationError
from dataclay._internal.proto import executionenv_pb2 as ee_pb2
from dataclay._internal.rpc.convert import add_object_data, add_object_delta, object_record
from dataclay._internal.rpc.errors import error_from_info, error_info_for
from dataclay._internal.rpc.framing import FramingError, frame, read_frame

READ_BUFFER = 256 * 1024


class LinkProtocolError(Exception):
    """The Data Service sent something that is not a well-formed frame of a DataServiceMessage."""


class LinkClosedError(Exception):
    """The link can no longer carry frames (closed by either side, or the pipe failed)."""


class DataServiceLink:
    """A link over a pair of file descriptors. receive() is for one reader at a time (callers
    serialise it); send() may be called from any thread: a whole frame is written under one lock,
    so frames never interleave."""

    def __init__(self, read_fd: int, write_fd: int):
        # Buffered reads: a small frame costs no syscall when it arrived with others, and a large
        # body is read by the C buffered reader straight into its result.
        self._reader = os.fdopen(read_fd, "rb", buffering=READ_BUFFER)
        self._write_fd = write_fd
        self._write_lock = threading.Lock()
        self._writable = True

    @classmethod
    def from_standard_streams(cls) -> "DataServiceLink":
        """Takes standard input and output as the link, and points this process's own standard input
        at /dev/null and its standard output at its standard error: whatever model code prints goes
        to the Data Service's log, never into the link."""
        read_fd, write_fd = os.dup(0), os.dup(1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        sys.stdout.flush()
        os.dup2(2, 1)
        sys.stdout.reconfigure(line_buffering=True)  # each printed line reaches the log as it is printed
        for fd in (read_fd, write_fd):
            os.set_inheritable(fd, False)
        return cls(read_fd, write_fd)

    def send_hello(self, pid: int, runtime_version: str, confinement: str) -> None:
        """Sends the frame that must come first: who this environment is and how it is confined."""
        self.send(ee_pb2.EnvironmentMessage(hello=ee_pb2.EnvironmentHello(
            pid=pid, runtime_version=runtime_version, confinement=confinement)))

    def send_load(self, request_id: int, call_id: int, ids: list) -> None:
        """Asks for the stored state of objects of this backend, for call `call_id` (answered by a `loaded`)."""
        self.send(ee_pb2.EnvironmentMessage(load=ee_pb2.LoadRequest(request_id=request_id, call_id=call_id, ids=ids)))

    def send_relay(self, request_id: int, call_id: int, target: str, method: str, request: bytes) -> None:
        """Asks the Data Service to make a unary call for call `call_id` in its caller's session (answered by
        a `relayed`)."""
        self.send(ee_pb2.EnvironmentMessage(relay=ee_pb2.RelayRequest(
            request_id=request_id, call_id=call_id, target=target, method=method, request=request)))

    def send_result(self, call_id: int, result: bytes = b"", error=None, new_objects=(), deltas=(),
                    stored_field: str = "", spans=()) -> None:
        """Sends the result of call `call_id`: its DataClayException `error`, or its encoded `result`, the
        ObjectRecords it made persistent, the DeltaRecords of what it changed and the field whose stored
        value answers such requests (ee/stored_reads.py); and, for a traced call, its timed steps
        (ee/step_spans.py records)."""
        envelope = ee_pb2.EnvironmentMessage()
        message = envelope.result  # built in place: no message is copied into another
        message.call_id = call_id
        if error is not None:
            message.error.CopyFrom(error_info_for(error))
        else:
            message.result = result
            if stored_field:
                message.stored_field = stored_field
            if new_objects:
                add_object_data(message.new_objects, new_objects)
            if deltas:
                add_object_delta(message.deltas, deltas)
        for name, start, end, attributes, failure, parent in spans:
            message.spans.add(name=name, start_unix_nano=start, end_unix_nano=end, attributes=attributes,
                              error=failure, parent=parent)
        self.send(envelope)

    def send(self, message: ee_pb2.EnvironmentMessage) -> None:
        """Writes `message` as one frame; LinkClosedError if the link is closed for writing, and
        SerializationError (before writing anything) if `message` cannot be one frame."""
        try:
            body = message.SerializeToString()
        except Exception as e:  # upb refuses messages over 2 GiB, among others
            raise SerializationError(f"cannot encode the message for the Data Service: {e}") from None
        try:
            pending = memoryview(frame(body))
        except FramingError as e:
            raise SerializationError(str(e)) from None
        with self._write_lock:
            if not self._writable:
                raise LinkClosedError("the link to the Data Service is closed for writing")
            try:
                while pending:
                    pending = pending[os.write(self._write_fd, pending):]
            except OSError as e:
                # A partly written frame leaves the stream unusable: nothing more may follow it.
                self._writable = False
                raise LinkClosedError(f"writing to the Data Service failed: {e}") from None

    def receive(self) -> ee_pb2.DataServiceMessage | None:
        """The next DataServiceMessage, or None at end of stream (the Data Service closed the link).

        LinkProtocolError for a malformed frame or message, LinkClosedError if the pipe failed."""
        try:
            body = read_frame(self._reader.read)
        except FramingError as e:
            raise LinkProtocolError(f"from the Data Service: {e}") from None
        except (OSError, ValueError) as e:  # ValueError: the reader was closed under us
            raise LinkClosedError(f"reading from the Data Service failed: {e}") from None
        if body is None:
            return None
        message = ee_pb2.DataServiceMessage()
        try:
            message.ParseFromString(body)
        except DecodeError as e:
            raise LinkProtocolError(f"a {len(body)}-byte frame is not a DataServiceMessage: {e}") from None
        return message

    def finish_sending(self) -> None:
        """Closes the writing end once the frame being written is out: the Data Service sees end of
        stream after our last frame. Later sends raise LinkClosedError."""
        with self._write_lock:
            if not self._writable:
                return
            self._writable = False
            try:
                os.close(self._write_fd)
            except OSError:
                pass  # already closed: the Data Service sees end of stream anyway

    def close(self) -> None:
        """Closes both directions; a thread blocked in receive() sees end of stream or LinkClosedError."""
        self.finish_sending()
        try:
            self._reader.close()
        except OSError:
            pass  # nothing more to release


_KIND_NAMES = {number: name for name, number in ee_pb2.ExecutionKind.items()}


def execution_kind(value: int) -> str:
    """The name of an ExecuteRequest's kind ("CALL_METHOD", "GET_FIELD", "SET_FIELD"); "" if unknown.
    (A dictionary built once from the generated enum: 0.08 us a lookup, against 0.4 for its Name().)"""
    return _KIND_NAMES.get(value, "")


def loaded_objects(reply) -> list:
    """The ObjectRecords a LoadReply carries; the error it carries instead, raised."""
    if reply.HasField("error") and reply.error.code:
        raise error_from_info(reply.error)
    return [object_record(data) for data in reply.objects]
