package io.dataclay.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.ErrorCode;
import io.dataclay.exceptions.InternalException;
import io.dataclay.proto.ErrorInfo;
import org.junit.jupiter.api.Test;

class ErrorCodeMappingTest {
  @Test
  void every_wire_code_maps_to_an_error_code_and_back() {
    int mapped = 0;
    for (io.dataclay.proto.ErrorCode wire : io.dataclay.proto.ErrorCode.values()) {
      if (wire == io.dataclay.proto.ErrorCode.ERROR_UNSPECIFIED || wire == io.dataclay.proto.ErrorCode.UNRECOGNIZED) {
        continue;
      }
      ErrorCode code = GrpcErrors.fromWire(wire);
      assertEquals(wire.name(), code.name());
      assertEquals(wire, GrpcErrors.toWire(code));
      mapped++;
    }
    assertEquals(ErrorCode.values().length, mapped, "an error code has no wire code");
  }

  @Test
  void every_error_code_maps_to_a_wire_code_and_back() {
    for (ErrorCode code : ErrorCode.values()) {
      assertEquals(code, GrpcErrors.fromWire(GrpcErrors.toWire(code)));
    }
  }

  @Test
  void an_unspecified_or_unknown_wire_code_is_internal() {
    assertEquals(ErrorCode.INTERNAL, GrpcErrors.fromWire(io.dataclay.proto.ErrorCode.ERROR_UNSPECIFIED));
    assertEquals(ErrorCode.INTERNAL, GrpcErrors.fromWire(io.dataclay.proto.ErrorCode.UNRECOGNIZED));
    assertInstanceOf(InternalException.class, GrpcErrors.fromInfo(ErrorInfo.newBuilder().setCodeValue(999).build()));
  }

  @Test
  void every_exception_travels_as_its_own_code() {
    for (ErrorCode code : ErrorCode.values()) {
      if (code == ErrorCode.REMOTE_EXCEPTION) {
        continue; // needs its remote type and arguments: fromInfo builds it
      }
      DataClayException e = GrpcErrors.forCode(code, "m");
      assertEquals(code, e.code(), e.getClass().getName());
      ErrorInfo info = GrpcErrors.info(e);
      assertEquals(GrpcErrors.toWire(code), info.getCode());
      DataClayException back = GrpcErrors.fromInfo(info);
      assertEquals(e.getClass(), back.getClass());
      assertEquals(code, back.code());
    }
  }
}
