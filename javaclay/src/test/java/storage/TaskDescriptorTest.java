package storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class TaskDescriptorTest {
  @Test
  void aCompssDescriptorSplitsIntoNameParametersAndReturnTypeAndKeepsItsWireName() throws Exception {
    // run
    TaskDescriptor d = TaskDescriptor.parse("merge(ILjava/util/Map;[[J[Ljava/lang/String;Z)Ljava/util/HashMap;");
    // verify
    assertEquals("merge", d.name());
    assertEquals(List.of("I", "Ljava/util/Map;", "[[J", "[Ljava/lang/String;", "Z"), d.parameters());
    assertEquals("Ljava/util/HashMap;", d.returnType());
    assertEquals("merge(ILjava/util/Map;[[J[Ljava/lang/String;Z)Ljava/util/HashMap;", d.wireName());
  }

  @Test
  void aVoidMethodWithoutParametersParses() throws Exception {
    // run
    TaskDescriptor d = TaskDescriptor.parse("reset()V");
    // verify
    assertEquals(List.of(), d.parameters());
    assertEquals("V", d.returnType());
    assertEquals("reset()V", d.wireName());
  }

  @Test
  void aPlainMethodNameIsAcceptedWithUnknownParameters() throws Exception {
    // run
    TaskDescriptor d = TaskDescriptor.parse("wordCount");
    // verify
    assertEquals("wordCount", d.wireName());
    assertNull(d.parameters());
    d.checkArguments(3); // not known here: the backend checks
  }

  @Test
  void malformedDescriptorsAreRefusedSayingWhatIsWrong() {
    // run + verify
    assertTrue(refusal(null).contains("empty"));
    assertTrue(refusal("  ").contains("empty"));
    assertTrue(refusal("(I)V").contains("method name"));
    assertTrue(refusal("9lives()V").contains("method name"));
    assertTrue(refusal("add(I").contains("')'"));
    assertTrue(refusal("add(Q)V").contains("invalid type 'Q'"));
    assertTrue(refusal("add(V)V").contains("invalid type 'V'"));
    assertTrue(refusal("add(Ljava/lang/String)V").contains("unterminated class type"));
    assertTrue(refusal("add(L;)V").contains("unterminated class type"));
    assertTrue(refusal("add(I)").contains("ends inside a type"));
    assertTrue(refusal("add(I)[").contains("ends inside a type"));
    assertTrue(refusal("add(I)VV").contains("text after its return type"));
  }

  @Test
  void argumentCountMustMatchTheParameterList() throws Exception {
    // setup
    TaskDescriptor d = TaskDescriptor.parse("add(II)I");
    // run
    StorageException e = assertThrows(StorageException.class, () -> d.checkArguments(1));
    // verify
    assertTrue(e.getMessage().contains("takes 2 arguments, the task passes 1"), e.getMessage());
    d.checkArguments(2);
  }

  private static String refusal(String text) {
    return assertThrows(StorageException.class, () -> TaskDescriptor.parse(text)).getMessage();
  }
}
