package kafkaaudit.bronze;

import java.security.GeneralSecurityException;
import kafkaaudit.KeyedFingerprint;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import scala.collection.Seq;

/**
 * The keyed fingerprints of a record's secret values as logged (issue 15): the JVM's twin of
 * {@code transforms.bronze.redaction._fingerprint}, applied to each element of an array, so that
 * bronze needs no Python worker.
 *
 * <p>Each value's JSON quotes are removed when it starts and ends with one (and has at least two
 * characters); the rest's keyed fingerprint under the lake's key is its element ({@link
 * KeyedFingerprint#hex}: HMAC-SHA256, 32 lowercase hex characters). A null array gives null, a
 * null element a null element.
 *
 * <p>One function over the whole array, not one per element inside Spark's {@code transform}: a
 * higher-order function has no generated code, so its projection ran outside the write's
 * whole-stage code and copied every row (issue 15, forty-eighth part).
 *
 * <p>The key is held by the function object, which Spark serializes into each task as it does a
 * Python UDF's closure: it is in no query plan, {@code explain()} or event log (the plan shows
 * {@code kafka_audit_fingerprints(x)}), and this class has no {@code toString} that prints it.
 */
public final class Fingerprints implements UDF1<Seq<String>, String[]> {
  private static final long serialVersionUID = 1L;

  private final byte[] key;

  private Fingerprints(byte[] key) {
    this.key = key.clone();
  }

  /**
   * The fingerprints of {@code values} (array of strings) under {@code key}, as a column (array
   * of strings; null for null).
   *
   * @throws IllegalArgumentException for an empty key (a lake's key has at least 32 bytes)
   */
  public static Column of(Column values, byte[] key) {
    if (key.length == 0) {
      throw new IllegalArgumentException("empty fingerprint key");
    }
    return functions
        .udf(new Fingerprints(key), DataTypes.createArrayType(DataTypes.StringType))
        .withName("kafka_audit_fingerprints")
        .apply(values);
  }

  @Override
  public String[] call(Seq<String> values) throws GeneralSecurityException {
    if (values == null) {
      return null;
    }
    String[] found = new String[values.length()];
    for (int i = 0; i < found.length; i++) {
      found[i] = fingerprint(values.apply(i));
    }
    return found;
  }

  private String fingerprint(String value) throws GeneralSecurityException {
    if (value == null) {
      return null;
    }
    int n = value.length();
    boolean quoted = n >= 2 && value.charAt(0) == '"' && value.charAt(n - 1) == '"';
    return KeyedFingerprint.hex(key, quoted ? value.substring(1, n - 1) : value);
  }
}
