package io.dataclay.rpc;

import io.dataclay.exceptions.InvalidArgumentException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A PEM file named by a setting (for instance DATACLAY_TLS_CA), read once when the configuration
 * is loaded so that a missing or unreadable file stops the process at start, with a message that
 * names the setting and the path. Only paths appear in messages, never the contents.
 */
public final class PemFile {
  private final String setting;
  private final Path path;
  private final byte[] bytes;

  private PemFile(String setting, Path path, byte[] bytes) {
    this.setting = setting;
    this.path = path;
    this.bytes = bytes;
  }

  /**
   * Reads {@code path}, which setting {@code setting} named.
   *
   * @throws InvalidArgumentException naming the setting and the path when it cannot be read or is empty
   */
  public static PemFile read(String setting, String path) {
    Path p = Path.of(path);
    byte[] content;
    try {
      content = Files.readAllBytes(p);
    } catch (NoSuchFileException e) {
      throw new InvalidArgumentException(setting + "=" + path + ": no such file");
    } catch (AccessDeniedException e) {
      throw new InvalidArgumentException(setting + "=" + path + ": cannot read it (permission denied)");
    } catch (IOException e) {
      throw new InvalidArgumentException(setting + "=" + path + ": cannot read it (" + e.getMessage() + ")");
    }
    if (content.length == 0) {
      throw new InvalidArgumentException(setting + "=" + path + ": the file is empty");
    }
    return new PemFile(setting, p, content);
  }

  /** The setting that named this file. */
  public String setting() {
    return setting;
  }

  /** Where the file is. */
  public Path path() {
    return path;
  }

  /** A fresh stream over the contents read at start. */
  public ByteArrayInputStream stream() {
    return new ByteArrayInputStream(bytes);
  }

  /**
   * The X.509 certificates in the file (at least one).
   *
   * @throws InvalidArgumentException naming the setting when the file holds no PEM certificate
   */
  public List<X509Certificate> certificates() {
    try {
      Collection<? extends java.security.cert.Certificate> found =
          CertificateFactory.getInstance("X.509").generateCertificates(stream());
      List<X509Certificate> out = new ArrayList<>();
      for (java.security.cert.Certificate c : found) {
        out.add((X509Certificate) c);
      }
      if (!out.isEmpty()) {
        return out;
      }
    } catch (CertificateException e) {
      // reported below
    }
    throw new InvalidArgumentException(this + ": not a PEM certificate (expected -----BEGIN CERTIFICATE-----)");
  }

  /**
   * Checks the file holds an unencrypted PKCS#8 private key, the form gRPC reads.
   *
   * @throws InvalidArgumentException naming the setting otherwise (never quoting the contents)
   */
  public void checkPrivateKey() {
    String text = new String(bytes, StandardCharsets.US_ASCII);
    if (text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
      throw new InvalidArgumentException(this + ": the key is encrypted; give an unencrypted PKCS#8 key "
          + "(openssl pkcs8 -topk8 -nocrypt) in a file only this user can read");
    }
    if (!text.contains("-----BEGIN PRIVATE KEY-----")) {
      throw new InvalidArgumentException(this + ": not a PKCS#8 PEM private key (expected -----BEGIN PRIVATE KEY-----;"
          + " convert with openssl pkcs8 -topk8 -nocrypt)");
    }
  }

  /** "SETTING=path", how messages name this file. */
  @Override
  public String toString() {
    return setting + "=" + path;
  }
}
