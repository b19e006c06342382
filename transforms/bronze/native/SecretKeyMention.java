package kafkaaudit.bronze;

import java.util.ArrayList;
import java.util.List;
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
 *
 * <p>One character in {@code PROBE} is read (issue 15, forty-seventh part: the scan of every
 * character against every needle was a third of the {@code raw_lines} write's CPU). Every
 * needle has at least {@code PROBE} characters, so any occurrence holds a probed character
 * among its first {@code PROBE}; a probe that is one of those characters of some needle
 * ({@code AT}) compares that needle where it would then start.
 */
public final class SecretKeyMention implements UDF1<String, Boolean> {
  private static final long serialVersionUID = 1L;
  /**
   * {@code SECRET_JSON_KEYS} lowered, saslAuthBytes left out (it contains authBytes). {@code
   * tests/spark/test_bronze.py} checks that the two lists agree.
   */
  static final String[] NEEDLES = {"hmac", "authbytes", "requestdata", "responsedata", "password"};
  /** The shortest needle's length: the distance between two probed characters. */
  static final int PROBE = 4;
  /**
   * For each lowercase ASCII character, where it stands among the needles' first {@code PROBE}
   * characters: {@code needle << 8 | offset} for each place; null where it stands nowhere.
   */
  private static final int[][] AT = places();

  @Override
  public Boolean call(String text) {
    if (text == null) {
      return null;
    }
    int n = text.length();
    for (int probe = PROBE - 1; probe < n; probe += PROBE) {
      char c = lower(text.charAt(probe));
      int[] places = c < AT.length ? AT[c] : null;
      if (places == null) {
        continue;
      }
      for (int place : places) {
        int start = probe - (place & 0xff);
        if (start >= 0 && startsAt(text, start, NEEDLES[place >>> 8])) {
          return Boolean.TRUE;
        }
      }
    }
    return Boolean.FALSE;
  }

  private static int[][] places() {
    List<List<Integer>> places = new ArrayList<>();
    for (int c = 0; c < 128; c++) {
      places.add(new ArrayList<>());
    }
    for (int needle = 0; needle < NEEDLES.length; needle++) {
      if (NEEDLES[needle].length() < PROBE) {
        throw new IllegalStateException("a needle shorter than PROBE: " + NEEDLES[needle]);
      }
      for (int offset = 0; offset < PROBE; offset++) {
        places.get(NEEDLES[needle].charAt(offset)).add(needle << 8 | offset);
      }
    }
    int[][] table = new int[128][];
    for (int c = 0; c < 128; c++) {
      List<Integer> at = places.get(c);
      table[c] = at.isEmpty() ? null : at.stream().mapToInt(Integer::intValue).toArray();
    }
    return table;
  }

  private static boolean startsAt(String text, int at, String needle) {
    int length = needle.length();
    if (at + length > text.length()) {
      return false;
    }
    for (int j = 0; j < length; j++) {
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
