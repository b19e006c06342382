package kafkaaudit.bronze;

import org.apache.spark.sql.api.java.UDF1;

/**
 * Whether a text names a secret key in any ASCII case: the JVM's twin of {@code
 * transforms.bronze.redaction.mentions_secret_key} (issue 15), which lowers the whole text
 * ({@code lower()}: Spark 4.2 calls a boxed function once per byte) before five substring
 * searches.
 *
 * <p>The same answer for every text: a needle is lowercase ASCII letters, and a run of ASCII
 * letters is lowered in place by {@code lower()} while no other character lowers to one of
 * them (the Kelvin sign lowers to {@code k}, the dotted capital I to {@code i} and a combining
 * dot: neither letter is in a needle). So this compares ASCII letters case-insensitively and
 * every other character exactly. Null in, null out.
 */
public final class SecretKeyMention implements UDF1<String, Boolean> {
  private static final long serialVersionUID = 1L;
  /**
   * {@code SECRET_JSON_KEYS} lowered, saslAuthBytes left out (it contains authBytes). {@code
   * tests/spark/test_bronze.py} checks that the two lists agree.
   */
  static final String[] NEEDLES = {"hmac", "authbytes", "requestdata", "responsedata", "password"};

  @Override
  public Boolean call(String text) {
    if (text == null) {
      return null;
    }
    int n = text.length();
    for (int i = 0; i < n; i++) {
      char c = lower(text.charAt(i));
      for (String needle : NEEDLES) {
        if (c == needle.charAt(0) && startsAt(text, i, needle)) {
          return Boolean.TRUE;
        }
      }
    }
    return Boolean.FALSE;
  }

  private static boolean startsAt(String text, int at, String needle) {
    int length = needle.length();
    if (at + length > text.length()) {
      return false;
    }
    for (int j = 1; j < length; j++) {
      if (lower(text.charAt(at + j)) != needle.charAt(j)) {
        return false;
      }
    }
    return true;
  }

  private static char lower(char c) {
    return c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c;
  }
}
