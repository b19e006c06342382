package kafkaaudit.bronze;

import java.security.GeneralSecurityException;
import kafkaaudit.KeyedFingerprint;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * The keyed fingerprint of a secret value as logged (issue 15): the JVM's twin of
 * {@code transforms.bronze.redaction._fingerprint}, so that bronze needs no Python worker.
 *
 * <p>The value's JSON quotes are removed when it starts and ends with one (and has at least two
 * characters); the rest's keyed fingerprint under the lake's key is returned ({@link
 * KeyedFingerprint#hex}: HMAC-SHA256, 32 lowercase hex characters). Null in, null out.
 *
 * <p>The key is held by the function object, which Spark serializes into each task as it does a
 * Python UDF's closure: it is in no query plan, {@code explain()} or event log (the plan shows
 * {@code kafka_audit_fingerprint(x)}), and this class has no {@code toString} that prints it.
 */
public final class Fingerprint implements UDF1<String, String> {
  private static final long serialVersionUID = 1L;

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
    return KeyedFingerprint.hex(key, quoted ? value.substring(1, n - 1) : value);
  }
}
