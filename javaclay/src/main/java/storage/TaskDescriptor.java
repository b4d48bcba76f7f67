package storage;

import java.util.ArrayList;
import java.util.List;

/**
 * The method a COMPSs task names: its name and JVM descriptor, as COMPSs builds it
 * ({@code "wordCount()Ljava/util/HashMap;"}, {@code "add(ILjava/lang/String;)V"}), which is also
 * how dataClay names a method on the wire. A plain name (a method that is not overloaded) is
 * accepted too; its parameters are then not known here.
 *
 * @param name the method's name
 * @param parameters the parameters' type descriptors, or null for a plain name
 * @param returnType the return type's descriptor ("V": void), or null for a plain name
 */
record TaskDescriptor(String name, List<String> parameters, String returnType) {
  /** Parses {@code text}; StorageException saying what is wrong when it is not a method descriptor. */
  static TaskDescriptor parse(String text) throws StorageException {
    if (text == null || text.isBlank()) {
      throw new StorageException("the task descriptor is empty: expected a method name and JVM descriptor, "
          + "e.g. wordCount()Ljava/util/HashMap;");
    }
    int open = text.indexOf('(');
    String name = open < 0 ? text : text.substring(0, open);
    if (!isIdentifier(name)) {
      throw new StorageException("task descriptor '" + text + "' does not start with a Java method name");
    }
    if (open < 0) {
      return new TaskDescriptor(name, null, null);
    }
    int close = text.indexOf(')', open);
    if (close < 0) {
      throw new StorageException("task descriptor '" + text + "' has no ')' closing its parameter list");
    }
    List<String> parameters = new ArrayList<>();
    int i = open + 1;
    while (i < close) {
      int end = typeEnd(text, i, close, false);
      parameters.add(text.substring(i, end));
      i = end;
    }
    int end = typeEnd(text, close + 1, text.length(), true);
    if (end != text.length()) {
      throw new StorageException("task descriptor '" + text + "' has text after its return type");
    }
    return new TaskDescriptor(name, List.copyOf(parameters), text.substring(close + 1));
  }

  /** The method as dataClay names it on the wire (name plus descriptor, or the plain name). */
  String wireName() {
    if (parameters == null) {
      return name;
    }
    return name + "(" + String.join("", parameters) + ")" + returnType;
  }

  /** StorageException unless {@code count} arguments fit the parameter list. */
  void checkArguments(int count) throws StorageException {
    if (parameters != null && parameters.size() != count) {
      throw new StorageException("method " + wireName() + " takes " + parameters.size() + " arguments, the task "
          + "passes " + count);
    }
  }

  // The end of the field type descriptor starting at {@code from} (before {@code limit}); V only as a return type.
  private static int typeEnd(String text, int from, int limit, boolean isReturn) throws StorageException {
    int i = from;
    while (i < limit && text.charAt(i) == '[') {
      i++;
    }
    if (i >= limit) {
      throw new StorageException("task descriptor '" + text + "' ends inside a type at position " + from);
    }
    char c = text.charAt(i);
    if ("BCDFIJSZ".indexOf(c) >= 0 || (c == 'V' && isReturn && i == from)) {
      return i + 1;
    }
    if (c == 'L') {
      int semi = text.indexOf(';', i);
      if (semi < 0 || semi >= limit || semi == i + 1) {
        throw new StorageException("task descriptor '" + text + "' has an unterminated class type at position " + i);
      }
      return semi + 1;
    }
    throw new StorageException("task descriptor '" + text + "' has an invalid type '" + c + "' at position " + i);
  }

  private static boolean isIdentifier(String s) {
    if (s.isEmpty() || !Character.isJavaIdentifierStart(s.charAt(0))) {
      return false;
    }
    return s.chars().skip(1).allMatch(Character::isJavaIdentifierPart);
  }
}
