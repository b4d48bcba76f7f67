package io.dataclay.logic.accounts;

import io.dataclay.logic.metadata.AccountRecord;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/** PBKDF2-HMAC-SHA256 password hashing with a random salt; hashes are compared in constant time. */
public final class Passwords {
  /** Iterations for new hashes (stored per account, so raising it later keeps old hashes valid). */
  static final int ITERATIONS = 100_000;
  /** A hash no password can match: accounts that must not log in by password. */
  static final String LOCKED = "!";

  private static final int SALT_BYTES = 16;
  private static final int HASH_BITS = 256;
  private static final SecureRandom RANDOM = new SecureRandom();

  private Passwords() {}

  /** An account to check against when the user does not exist, so that costs as much as a wrong password. */
  static AccountRecord unknownAccount() {
    return UnknownAccount.RECORD;
  }

  /** A new account record holding a fresh salted hash of {@code password}. */
  public static AccountRecord newAccount(String username, String password, boolean admin) {
    byte[] salt = new byte[SALT_BYTES];
    RANDOM.nextBytes(salt);
    Base64.Encoder b64 = Base64.getEncoder();
    return new AccountRecord(username, b64.encodeToString(derive(password, salt, ITERATIONS)),
        b64.encodeToString(salt), ITERATIONS, admin);
  }

  /** An account that exists but can never log in by password. */
  static AccountRecord lockedAccount(String username, boolean admin) {
    return new AccountRecord(username, LOCKED, "", 0, admin);
  }

  /** True when {@code password} matches the account's stored hash. */
  static boolean matches(AccountRecord account, String password) {
    if (account.passwordHash().equals(LOCKED) || account.passwordIterations() < 1) {
      return false;
    }
    Base64.Decoder b64 = Base64.getDecoder();
    byte[] expected = b64.decode(account.passwordHash());
    byte[] actual = derive(password, b64.decode(account.passwordSalt()), account.passwordIterations());
    return MessageDigest.isEqual(expected, actual);
  }

  private static String newRandomPassword() {
    byte[] bits = new byte[24];
    RANDOM.nextBytes(bits);
    return Base64.getEncoder().encodeToString(bits);
  }

  private static byte[] derive(String password, byte[] salt, int iterations) {
    PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), salt, iterations, HASH_BITS);
    try {
      return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("PBKDF2WithHmacSHA256 is not available in this JVM", e);
    } finally {
      spec.clearPassword();
    }
  }

  /** Hashed on first use only: a start-up does not pay for it. */
  private static final class UnknownAccount {
    static final AccountRecord RECORD = newAccount("unknown", newRandomPassword(), false);
  }
}
