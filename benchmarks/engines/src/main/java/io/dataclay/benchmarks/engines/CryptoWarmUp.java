package io.dataclay.benchmarks.engines;

import java.security.GeneralSecurityException;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Compiles the JDK's AES-GCM before the first encrypted engine is measured. Without it the first
 * one pays the JIT: sealing a 256 KiB value takes ~6 ms interpreted against ~0.2 ms compiled here,
 * and the 1 s rounds of 1 MiB puts are too few to get there (measured: kv+enc put 1 MiB p50 44 ms
 * when it ran first, heap+enc 1.1 ms after it). A Data Service that has been running has compiled
 * it; the benchmark measures that steady state, as it does for the heap and the pools.
 */
final class CryptoWarmUp {
  private static final int[] SIZES = {32, 1024, 64 * 1024, 256 * 1024};
  private static final long BUDGET_BYTES = 2L << 30;

  private CryptoWarmUp() {}

  /** Encrypts and decrypts about 2 GiB in values of the benchmark's sizes; returns the seconds it took. */
  static double run() {
    long start = System.nanoTime();
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      SecretKeySpec key = new SecretKeySpec(new byte[32], "AES");
      byte[] iv = new byte[12];
      long counter = 0;
      for (int size : SIZES) {
        byte[] value = new byte[size];
        byte[] aad = new byte[32];
        for (long done = 0; done < BUDGET_BYTES / SIZES.length; done += size) {
          Arrays.fill(iv, 4, 12, (byte) 0);
          long n = ++counter;
          for (int i = 0; i < 8; i++) {
            iv[11 - i] = (byte) (n >>> (8 * i));
          }
          cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, iv));
          cipher.updateAAD(aad);
          byte[] sealed = cipher.doFinal(value);
          cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, iv));
          cipher.updateAAD(aad);
          cipher.doFinal(sealed);
        }
      }
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM warm-up failed: " + e, e);
    }
    return (System.nanoTime() - start) / 1e9;
  }
}
