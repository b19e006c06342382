package kafkaaudit;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The keyed fingerprint of a text, as {@code transforms.fingerprints.keyed_fingerprint} computes
 * it: HMAC-SHA256 under the lake's key over the text's UTF-8 bytes, the first 32 lowercase hex
 * characters (128 bits). Bronze's fingerprint of a secret ({@code kafkaaudit.bronze.Fingerprint})
 * writes it; KIP-48's HMAC check ({@code kafkaaudit.gold.TokenHmac}) recomputes it. One place, so
 * that the two never drift: were they to, every {@code hmac_verified} would turn false.
 */
public final class KeyedFingerprint {
  private static final String ALGORITHM = "HmacSHA256";
  private static final char[] HEX = "0123456789abcdef".toCharArray();
  /** {@code transforms.fingerprints.FINGERPRINT_HEX_CHARS}. */
  private static final int HEX_CHARS = 32;

  private KeyedFingerprint() {}

  /** {@code text}'s fingerprint under {@code key} (a non-empty key; {@code text} not null). */
  public static String hex(byte[] key, String text) throws GeneralSecurityException {
    // One Mac per call: secret values are rare, and no Mac is then shared between the threads
    // that may evaluate one plan's function.
    Mac mac = Mac.getInstance(ALGORITHM);
    mac.init(new SecretKeySpec(key, ALGORITHM));
    byte[] digest = mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
    char[] hex = new char[HEX_CHARS];
    for (int i = 0; i < HEX_CHARS / 2; i++) {
      hex[2 * i] = HEX[(digest[i] >> 4) & 0xF];
      hex[2 * i + 1] = HEX[digest[i] & 0xF];
    }
    return new String(hex);
  }
}
