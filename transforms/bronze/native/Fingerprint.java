package kafkaaudit.bronze;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * The keyed fingerprint of a secret value as logged (issue 15): the JVM's twin of
 * {@code transforms.bronze.redaction._fingerprint}, so that bronze needs no Python worker.
 *
 * <p>The value's JSON quotes are removed when it starts and ends with one (and has at least two
 * characters); the rest is HMAC-SHA256'd, keyed with the lake's fingerprint key, over its UTF-8
 * bytes, and the first 32 lowercase hex characters (128 bits) are returned: {@code
 * transforms.fingerprints.keyed_fingerprint}. Null in, null out.
 *
 * <p>The key is held by the function object, which Spark serializes into each task as it does a
 * Python UDF's closure: it is in no query plan, {@code explain()} or event log (the plan shows
 * {@code kafka_audit_fingerprint(x)}), and this class has no {@code toString} that prints it.
 */
public final class Fingerprint implements UDF1<String, String> {
  private static final long serialVersionUID = 1L;
  private static final String ALGORITHM = "HmacSHA256";
  private static final char[] HEX = "0123456789abcdef".toCharArray();
  /** {@code transforms.fingerprints.FINGERPRINT_HEX_CHARS}. */
  private static final int HEX_CHARS = 32;

  private final byte[] key;

  private Fingerprint(byte[] key) {
    this.key = key.clone();
  }

  /**
   * {@code value}'s fingerprint under {@code key}, as a column (string; null for null).
   *
   * @throws IllegalArgumentException for an empty key (a lake's key has at least 32 bytes)
   */
  public static Column of(Column value, byte[] key) {
    if (key.length == 0) {
      throw new IllegalArgumentException("empty fingerprint key");
    }
    return functions
        .udf(new Fingerprint(key), DataTypes.StringType)
        .withName("kafka_audit_fingerprint")
        .apply(value);
  }

  @Override
  public String call(String value) throws GeneralSecurityException {
    if (value == null) {
      return null;
    }
    int n = value.length();
    boolean quoted = n >= 2 && value.charAt(0) == '"' && value.charAt(n - 1) == '"';
    return keyed(key, quoted ? value.substring(1, n - 1) : value);
  }

  /**
   * The keyed fingerprint of {@code text} as it is (no quote removed): HMAC-SHA256 under {@code
   * key} over its UTF-8 bytes, the first 32 lowercase hex characters ({@code
   * transforms.fingerprints.keyed_fingerprint}). KIP-48's HMAC check compares with it.
   */
  public static String keyed(byte[] key, String text) throws GeneralSecurityException {
    // One Mac per call: secret values are rare, and the object is then never shared between
    // the threads that may evaluate one plan's function.
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
