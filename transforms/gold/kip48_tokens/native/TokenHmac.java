package kafkaaudit.gold;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import kafkaaudit.KeyedFingerprint;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * KIP-48's expected HMAC fingerprints in the JVM (issue 15): the twin of {@code
 * transforms.gold.kip48_tokens.hmac.expected_fingerprints}' pandas UDF, so that gold needs no
 * Python worker with a configured token secret.
 *
 * <p>For a token id, the HMAC the cluster's secret mints ({@code
 * kafka.server.DelegationTokenManager.createHmac}: HMAC-SHA512 keyed with the secret's bytes over
 * the token id's UTF-8 bytes), printed as the request log prints it: base64 (the 2.8+ JSON form)
 * and {@code Arrays.toString} (the older string form); then each printed form's keyed
 * fingerprint under the lake's key ({@link KeyedFingerprint#hex}), as bronze keeps a logged HMAC.
 * Returns the two fingerprints in that order; null for a null token id.
 *
 * <p>The secret and the key are held by the function object, which Spark serializes into each
 * task as it does a Python UDF's closure: in no query plan, {@code explain()} or event log (the
 * plan shows {@code kafka_audit_token_hmac_fingerprints(x)}); no {@code toString} prints them.
 */
public final class TokenHmac implements UDF1<String, String[]> {
  private static final long serialVersionUID = 1L;
  private static final String ALGORITHM = "HmacSHA512";

  private final byte[] secret;
  private final byte[] key;

  private TokenHmac(byte[] secret, byte[] key) {
    this.secret = secret.clone();
    this.key = key.clone();
  }

  /**
   * The expected fingerprints of {@code tokenId}'s HMAC, as a column (array of 2 strings; null
   * for null).
   *
   * @throws IllegalArgumentException for an empty secret (tokens disabled: Kafka mints none) or
   *     an empty fingerprint key
   */
  public static Column of(Column tokenId, byte[] secret, byte[] key) {
    if (secret.length == 0 || key.length == 0) {
      throw new IllegalArgumentException("empty token secret or fingerprint key");
    }
    return functions
        .udf(new TokenHmac(secret, key), DataTypes.createArrayType(DataTypes.StringType))
        .withName("kafka_audit_token_hmac_fingerprints")
        .apply(tokenId);
  }

  @Override
  public String[] call(String tokenId) throws GeneralSecurityException {
    if (tokenId == null) {
      return null;
    }
    // One Mac per call: token ids are few, and the object is never shared between threads.
    Mac mac = Mac.getInstance(ALGORITHM);
    mac.init(new SecretKeySpec(secret, ALGORITHM));
    byte[] minted = mac.doFinal(tokenId.getBytes(StandardCharsets.UTF_8));
    return new String[] {
      KeyedFingerprint.hex(key, Base64.getEncoder().encodeToString(minted)),
      KeyedFingerprint.hex(key, Arrays.toString(minted)),
    };
  }
}
