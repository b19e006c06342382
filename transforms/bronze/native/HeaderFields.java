package kafkaaudit.bronze;

import org.apache.spark.sql.api.java.UDF1;

/**
 * The header fields of a log line in Kafka's own layouts, {@code [%d] %p %m (%c)%n} (or
 * {@code (%c:%L)}) and Strimzi's {@code %d %p %m (%c) [%t]%n}, without the regex: the JVM's
 * fast path of {@code transforms.bronze.layout.header_fields} (issue 15, forty-seventh part).
 *
 * <p>It answers only for a line on which {@code HEADER_PATTERN}'s first attempt succeeds, and
 * then with that attempt's groups, which are the regex's: no prefix, the timestamp either
 * bracketed and followed by {@code "] "} or bare and followed by a space, a level followed by
 * a space, then the message and the tail read as the regex reads them. The message is greedy, so the tail is found from the end of the line:
 * the last {@code " ("} after which the logger ({@code [A-Za-z_$][\w$.\-]*}, which can hold
 * neither {@code :} nor {@code )}, so its lazy quantifier has one choice), an optional
 * {@code :digits}, {@code )}, then either {@code " ["}, a thread up to the last {@code ]} and
 * Java's {@code \s} to the end (tried first, as the regex's optional group is greedy), or
 * {@code \s} to the end. Every other line gets null and the regex decides: a line holding a
 * line terminator ({@code .} and {@code $} treat those specially) or U+0001 (the split's
 * separator), another layout, a prefix, a level the regex may read otherwise.
 *
 * <p>Returns the regex's 8 groups (absent ones ""): prefix, {@code [}, timestamp, level,
 * message, logger, line number, thread; or null. {@code tests/spark/test_bronze.py} compares
 * it with the regex on real and generated lines and on seeded damage.
 */
public final class HeaderFields implements UDF1<String, String[]> {
  private static final long serialVersionUID = 1L;
  /** {@code yyyy-MM-dd HH:mm:ss,SSS}: {@code d} a digit, {@code T} a space or T, {@code ,} or . */
  private static final String STAMP = "dddd-dd-ddTdd:dd:dd,ddd";
  private static final String[] LEVELS = {
    "TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL",
  };

  @Override
  public String[] call(String line) {
    if (line == null || line.length() < STAMP.length() + 4) {
      return null;
    }
    // The regex's first attempt: no prefix, "[" when the line starts with one, the timestamp.
    boolean bracket = line.charAt(0) == '[';
    int stamp = bracket ? 1 : 0;
    int after = stamp + STAMP.length();
    if (!stamped(line, stamp) || bracket && line.charAt(after++) != ']'
        || line.charAt(after) != ' ' || !plain(line)) {
      return null;
    }
    int levelStart = after + 1;
    int space = line.indexOf(' ', levelStart);
    if (space < 0 || !isLevel(line.substring(levelStart, space))) {
      return null;
    }
    int messageStart = space + 1;
    // The message is greedy: its end is the last " (" from which the tail matches.
    for (int at = line.lastIndexOf(" (", line.length() - 2); at >= messageStart;
        at = line.lastIndexOf(" (", at - 1)) {
      String[] tail = tail(line, at + 2);
      if (tail != null) {
        return new String[] {
          "", bracket ? "[" : "", line.substring(stamp, stamp + STAMP.length()),
          line.substring(levelStart, space), line.substring(messageStart, at), tail[0], tail[1],
          tail[2],
        };
      }
    }
    return null;
  }

  /** No line terminator ({@code \n \r U+0085 U+2028 U+2029}) and no U+0001. */
  private static boolean plain(String line) {
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c == '\n' || c == '\r' || c == '\u0085' || c == '\u2028' || c == '\u2029'
          || c == '\u0001') {
        return false;
      }
    }
    return true;
  }

  /** {@code STAMP} at {@code from}, digits being ASCII ({@code \d}). */
  private static boolean stamped(String line, int from) {
    for (int i = 0; i < STAMP.length(); i++) {
      char c = line.charAt(from + i);
      char s = STAMP.charAt(i);
      boolean ok;
      if (s == 'd') {
        ok = c >= '0' && c <= '9';
      } else if (s == 'T') {
        ok = c == ' ' || c == 'T';
      } else if (s == ',') {
        ok = c == ',' || c == '.';
      } else {
        ok = c == s;
      }
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  private static boolean isLevel(String word) {
    for (String level : LEVELS) {
      if (level.equals(word)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Logger, line number ("" when absent) and thread ("" when absent) of a tail starting right
   * after {@code " ("} at {@code start}; null when the tail does not match there.
   */
  private static String[] tail(String line, int start) {
    int n = line.length();
    if (start >= n || !loggerStart(line.charAt(start))) {
      return null;
    }
    int end = start + 1;
    while (end < n && loggerPart(line.charAt(end))) {
      end++;
    }
    String logger = line.substring(start, end);
    String number = "";
    if (end < n && line.charAt(end) == ':') {
      int digits = end + 1;
      while (digits < n && line.charAt(digits) >= '0' && line.charAt(digits) <= '9') {
        digits++;
      }
      if (digits == end + 1 || digits >= n || line.charAt(digits) != ')') {
        return null;
      }
      number = line.substring(end + 1, digits);
      end = digits;
    }
    if (end >= n || line.charAt(end) != ')') {
      return null;
    }
    int after = end + 1;
    // " [thread]": the thread runs to the last ']' that only whitespace follows.
    if (after + 1 < n && line.charAt(after) == ' ' && line.charAt(after + 1) == '[') {
      int close = n - 1;
      while (close > after + 1 && space(line.charAt(close))) {
        close--;
      }
      if (close > after + 1 && line.charAt(close) == ']') {
        return new String[] {logger, number, line.substring(after + 2, close)};
      }
    }
    return blankFrom(line, after) ? new String[] {logger, number, ""} : null;
  }

  private static boolean blankFrom(String line, int from) {
    for (int i = from; i < line.length(); i++) {
      if (!space(line.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  /** Java's {@code \s} without the line terminators (refused before): space, tab, VT, FF. */
  private static boolean space(char c) {
    return c == ' ' || c == '\t' || c == '\u000b' || c == '\f';
  }

  private static boolean loggerStart(char c) {
    return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '$';
  }

  private static boolean loggerPart(char c) {
    return loggerStart(c) || c >= '0' && c <= '9' || c == '.' || c == '-';
  }
}
