package io.dataclay.logic.listing;

import io.dataclay.logic.checks.Checks;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * Where a page of a listing ended, as the opaque text a client sends back for the next page. It
 * holds the last key listed and a digest of the listing it belongs to (kind, account, filters),
 * so another listing's token is refused. It grants nothing: it is not signed, because whatever
 * position a client makes up, the next page is still read only from the datasets the session may
 * see at that moment.
 */
final class PageToken {
  private static final byte VERSION = 1;
  private static final int DIGEST_BYTES = 8;
  private static final int MAX_TEXT = 2048;

  private PageToken() {}

  /** The token of {@code position} in the listing {@code listing} describes. */
  static String encode(List<String> listing, List<String> position) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      out.write(digest(listing));
      out.writeByte(position.size());
      for (String part : position) {
        out.writeUTF(part);
      }
    } catch (IOException e) {
      throw new IllegalStateException("writing to memory failed", e);
    }
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes.toByteArray());
  }

  /**
   * The position a token of listing {@code listing} holds, with {@code parts} parts; an empty
   * token is the start (an empty list).
   *
   * @throws io.dataclay.exceptions.InvalidArgumentException naming {@code page_token} when the
   *     text is not such a token
   */
  static List<String> decode(String token, List<String> listing, int parts) {
    if (token == null || token.isEmpty()) {
      return List.of();
    }
    if (token.length() > MAX_TEXT) {
      throw notOurs("it is too long");
    }
    byte[] raw;
    try {
      raw = Base64.getUrlDecoder().decode(token);
    } catch (IllegalArgumentException e) {
      throw notOurs("it is not base64url text");
    }
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(raw))) {
      if (in.readByte() != VERSION) {
        throw notOurs("unknown version");
      }
      byte[] digest = in.readNBytes(DIGEST_BYTES);
      if (!MessageDigest.isEqual(digest, digest(listing))) {
        throw Checks.invalid("page_token", "belongs to another listing (other filters, or another account):"
            + " send it with the very request of the page it came with, or start again without one");
      }
      if (in.readUnsignedByte() != parts) {
        throw notOurs("wrong number of parts");
      }
      List<String> position = new ArrayList<>(parts);
      for (int i = 0; i < parts; i++) {
        position.add(in.readUTF());
      }
      if (in.available() != 0) {
        throw notOurs("trailing bytes");
      }
      return position;
    } catch (IOException e) {
      throw notOurs("it is cut short");
    }
  }

  private static io.dataclay.exceptions.InvalidArgumentException notOurs(String why) {
    return Checks.invalid("page_token", "is not a page token of this Logic Module (" + why + "): send the"
        + " next_page_token of the previous page as it came, or start again without one");
  }

  private static byte[] digest(List<String> listing) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      for (String part : listing) {
        byte[] b = (part == null ? "" : part).getBytes(StandardCharsets.UTF_8);
        // length-prefixed, so ("ab", "c") and ("a", "bc") differ
        sha.update(new byte[] {(byte) (b.length >>> 24), (byte) (b.length >>> 16), (byte) (b.length >>> 8),
            (byte) b.length});
        sha.update(b);
      }
      return Arrays.copyOf(sha.digest(), DIGEST_BYTES);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
