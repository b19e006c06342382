/*
 * The 1.0-2.7 string form of "Completed request:" parsed in one scan, for the records on which
 * transforms/silver/request_log/string_form.py would find nothing to quarantine (issue 15).
 *
 * call(body) takes the text after "Completed request:" and returns the struct of FIELDS, or
 * null when the record is not one it can answer for: then the expression parse computes the
 * record, as for every record without this class. It answers only where its values are the
 * expression parse's, so each condition below is conservative (a record it refuses may still
 * parse; one it answers for always gives the same values):
 *
 *  - HEADER_RE ("RequestHeader(apiKey=.., apiVersion=.., clientId=.., correlationId=..) -- "),
 *    matched at the start of the text before the last " from connection ", clientId the
 *    shortest text after which the rest of the header matches;
 *  - ",response:" after the header (request text before its first occurrence, response after);
 *  - METRICS_RE on the text after the last " from connection ": one ";totalTime:", a connection
 *    id without whitespace, each [^,]* metric up to the next comma, the principal up to the
 *    first ",listener:", then the listener and the optional client information, temporary
 *    memory and conversion time, ending the text; a later ",listener:" or ")" that the regex
 *    could backtrack to is not tried: the record is refused instead;
 *  - no line terminator anywhere (Java's "." and "$" treat them specially);
 *  - ints within range, longs of at most 18 digits, doubles written as Java's Double.toString
 *    writes them (Spark then calls the same Double.parseDouble);
 *  - the response's error codes: every "error_code=" not preceded by [A-Za-z0-9_] whose digits
 *    are an int; the top-level one, when the response has "error_code=", from a response that is
 *    one {...} whose inner brackets pair up and nest at most 12 deep (the twelve passes of
 *    struct_top_level_error_code then remove every group).
 *
 * Empty groups are null, as transforms.columns.group_at makes them; client_id is kept as
 * matched ("" included): the parse's nullif applies to both paths.
 */
package kafkaaudit.requestlog;

import static kafkaaudit.requestlog.Refused.require;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;

public final class StringFormParse implements UDF1<String, Row> {
  private static final long serialVersionUID = 1L;

  /** The struct's fields, in order: (name, Spark SQL type). */
  public static final String[][] FIELDS = {
    {"api_key_name", "string"}, {"api_version", "int"}, {"client_id", "string"},
    {"correlation_id", "int"}, {"request_text", "string"}, {"response_text", "string"},
    {"connection_id", "string"}, {"total_time_ms", "double"}, {"request_queue_time_ms", "double"},
    {"local_time_ms", "double"}, {"remote_time_ms", "double"}, {"throttle_time_ms", "bigint"},
    {"response_queue_time_ms", "double"}, {"send_time_ms", "double"},
    {"security_protocol", "string"}, {"principal", "string"}, {"listener", "string"},
    {"client_software_name", "string"}, {"client_software_version", "string"},
    {"temporary_memory_bytes", "bigint"}, {"message_conversions_time_ms", "double"},
    {"error_code", "int"}, {"found_error_codes", "array<int>"},
  };

  private static final String SEPARATOR = " from connection ";
  private static final String HEADER = "RequestHeader(apiKey=";
  private static final String RESPONSE = ",response:";
  /** METRICS_RE's literal keys, in order; "" for the metrics' own [^,]* values between them. */
  private static final String[] KEYS = {
    ";totalTime:", ",requestQueueTime:", ",localTime:", ",remoteTime:", ",throttleTime:",
    ",responseQueueTime:", ",sendTime:", ",securityProtocol:", ",principal:", ",listener:",
  };
  private static final String CLIENT = ",clientInformation:ClientInformation(softwareName=";
  private static final String VERSION = ", softwareVersion=";
  private static final String MEMORY = ",temporaryMemoryBytes:";
  private static final String CONVERSIONS = ",messageConversionsTime:";
  private static final String ERROR_CODE = "error_code=";
  private static final int MAX_GROUP_DEPTH = 12;

  @Override
  public Row call(String body) {
    if (body == null) return null;
    try {
      return parse(body);
    } catch (Refused refused) {
      return null;
    }
  }

  private static Row parse(String body) throws Refused {
    for (int i = 0; i < body.length(); i++) if (isLineTerminator(body.charAt(i))) throw Refused.INSTANCE;
    int cut = body.lastIndexOf(SEPARATOR);
    require(cut >= 0 && body.startsWith(HEADER));
    String before = body.substring(0, cut);
    String tail = body.substring(cut + SEPARATOR.length());
    require(!tail.isEmpty());
    Object[] out = new Object[FIELDS.length];
    String rest = header(before, out);
    int response = rest.indexOf(RESPONSE);
    require(response >= 0);
    String responseText = rest.substring(response + RESPONSE.length());
    out[4] = rest.substring(0, response);
    out[5] = responseText;
    metrics(tail, out);
    errorCodes(responseText, out);
    return RowFactory.create(out);
  }

  /** HEADER_RE's groups into out[0..3]; returns the text after the header. */
  private static String header(String before, Object[] out) throws Refused {
    int at = HEADER.length();
    int end = at;
    while (end < before.length() && isWordChar(before.charAt(end))) end++;
    require(end > at && before.startsWith(", apiVersion=", end));
    out[0] = before.substring(at, end);
    int digits = end + ", apiVersion=".length();
    int after = integerEnd(before, digits);
    require(after > digits && before.startsWith(", clientId=", after));
    out[1] = toInt(before.substring(digits, after));
    int clientStart = after + ", clientId=".length();
    // clientId is (.*?): the first position where ", correlationId=(-?\d+)\) -- " matches.
    for (int k = clientStart; k <= before.length(); k++) {
      if (before.startsWith(", correlationId=", k)) {
        int number = k + ", correlationId=".length();
        int numberEnd = integerEnd(before, number);
        if (numberEnd > number && before.startsWith(") -- ", numberEnd)) {
          out[2] = before.substring(clientStart, k);
          out[3] = toInt(before.substring(number, numberEnd));
          return before.substring(numberEnd + ") -- ".length());
        }
      }
    }
    throw Refused.INSTANCE;
  }

  /** METRICS_RE's groups into out[6..20]. */
  private static void metrics(String tail, Object[] out) throws Refused {
    int first = tail.indexOf(KEYS[0]);
    require(first > 0 && tail.indexOf(KEYS[0], first + 1) < 0);
    for (int i = 0; i < first; i++) require(!isRegexSpace(tail.charAt(i)));
    out[6] = tail.substring(0, first);
    int at = first;
    String[] values = new String[8];
    for (int key = 0; key < 8; key++) {
      int start = at + KEYS[key].length();
      int comma = tail.indexOf(',', start);
      require(comma >= 0 && tail.startsWith(KEYS[key + 1], comma));
      values[key] = tail.substring(start, comma);
      at = comma;
    }
    int principalStart = at + KEYS[8].length();
    int listenerKey = tail.indexOf(KEYS[9], principalStart);
    require(listenerKey >= 0);
    int listenerStart = listenerKey + KEYS[9].length();
    int listenerEnd = tail.indexOf(',', listenerStart);
    if (listenerEnd < 0) listenerEnd = tail.length();
    for (int i = 0; i < 7; i++) {
      // Not a ?: of a Long and a Double: Java would unbox both to a double.
      if (i == 4) out[7 + i] = toLong(values[i]);
      else out[7 + i] = toDouble(values[i]);
    }
    out[14] = emptyAsNull(values[7]);
    out[15] = emptyAsNull(tail.substring(principalStart, listenerKey));
    out[16] = emptyAsNull(tail.substring(listenerStart, listenerEnd));
    optional(tail.substring(listenerEnd), out);
  }

  /** The optional client information, temporary memory and conversion time into out[17..20]. */
  private static void optional(String rest, Object[] out) throws Refused {
    String left = rest;
    if (left.startsWith(CLIENT)) {
      int version = left.indexOf(VERSION, CLIENT.length());
      require(version >= 0);
      int close = left.indexOf(')', version + VERSION.length());
      require(close >= 0);
      out[17] = emptyAsNull(left.substring(CLIENT.length(), version));
      out[18] = emptyAsNull(left.substring(version + VERSION.length(), close));
      left = left.substring(close + 1);
    }
    if (left.startsWith(MEMORY)) {
      int comma = left.indexOf(',', MEMORY.length());
      int end = comma < 0 ? left.length() : comma;
      out[19] = toLong(left.substring(MEMORY.length(), end));
      left = left.substring(end);
    }
    if (left.startsWith(CONVERSIONS)) {
      String value = left.substring(CONVERSIONS.length());
      require(value.indexOf(',') < 0);
      out[20] = toDouble(value);
      left = "";
    }
    require(left.isEmpty());
  }

  /** out[21] (the top-level error_code) and out[22] (every error_code) of a response text. */
  private static void errorCodes(String response, Object[] out) throws Refused {
    List<Integer> found = new ArrayList<>();
    for (int i = response.indexOf(ERROR_CODE); i >= 0; i = response.indexOf(ERROR_CODE, i + 1)) {
      if (i > 0 && isWordChar(response.charAt(i - 1))) continue;
      int digits = i + ERROR_CODE.length();
      int end = integerEnd(response, digits);
      if (end > digits) found.add(toInt(response.substring(digits, end)));
    }
    out[22] = found;
    out[21] = response.contains(ERROR_CODE) ? topLevel(response) : null;
  }

  /**
   * struct_top_level_error_code, step by step: in the text inside the outer braces, first the
   * before-groups regex ^(?:[^{}\[\]]*?,)?error_code=(-?\d+)(?:,|$), whose greedy optional
   * group tries every comma before the first bracket before the text's start; then the first
   * "error_code=" at the start or after a comma of the depth-1 text (every nested {...} / [...]
   * group removed, as the twelve regexp_replace passes remove them), its digits ending the text
   * or followed by a comma.
   */
  private static Integer topLevel(String response) throws Refused {
    int length = response.length();
    require(length >= 2 && response.charAt(0) == '{' && response.charAt(length - 1) == '}');
    String flat = response.substring(1, length - 1);
    int firstBracket = flat.length();
    for (int i = 0; i < flat.length(); i++) {
      char ch = flat.charAt(i);
      if (ch == '{' || ch == '[' || ch == '}' || ch == ']') {
        firstBracket = i;
        break;
      }
    }
    for (int comma = flat.indexOf(',');
        comma >= 0 && comma < firstBracket;
        comma = flat.indexOf(',', comma + 1)) {
      Integer code = codeAt(flat, comma + 1);
      if (code != null) return code;
    }
    Integer atStart = codeAt(flat, 0);
    if (atStart != null) return atStart;
    StringBuilder level = new StringBuilder(length);
    char[] open = new char[MAX_GROUP_DEPTH];
    int depth = 0;
    for (int i = 1; i < length - 1; i++) {
      char ch = response.charAt(i);
      if (ch == '{' || ch == '[') {
        require(depth < MAX_GROUP_DEPTH);
        open[depth++] = ch;
      } else if (ch == '}' || ch == ']') {
        require(depth > 0 && open[depth - 1] == (ch == '}' ? '{' : '['));
        depth--;
      } else if (depth == 0) {
        level.append(ch);
      }
    }
    require(depth == 0);
    String text = level.toString();
    for (int at = text.indexOf(ERROR_CODE); at >= 0; at = text.indexOf(ERROR_CODE, at + 1)) {
      if (at > 0 && text.charAt(at - 1) != ',') continue;
      Integer code = codeAt(text, at);
      if (code != null) return code;
    }
    return null;
  }

  /** The code of "error_code=(-?\d+)(?:,|$)" matched at ``at`` of ``text``, else null. */
  private static Integer codeAt(String text, int at) throws Refused {
    if (!text.startsWith(ERROR_CODE, at)) return null;
    int digits = at + ERROR_CODE.length();
    int end = integerEnd(text, digits);
    if (end == digits || (end < text.length() && text.charAt(end) != ',')) return null;
    return toInt(text.substring(digits, end));
  }

  /** End of Java's -?\d+ from ``start`` (== start when it does not match there). */
  private static int integerEnd(String text, int start) {
    int at = start < text.length() && text.charAt(start) == '-' ? start + 1 : start;
    int end = at;
    while (end < text.length() && text.charAt(end) >= '0' && text.charAt(end) <= '9') end++;
    return end > at ? end : start;
  }

  private static int toInt(String text) throws Refused {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw Refused.INSTANCE;
    }
  }

  /** A [^,]* long metric: null when empty; refused unless -?\d{1,18}. */
  private static Long toLong(String text) throws Refused {
    if (text.isEmpty()) return null;
    require(integerEnd(text, 0) == text.length() && text.length() <= 18);
    return Long.parseLong(text);
  }

  /** A [^,]* double metric: null when empty; refused unless -?\d+.\d+ with an optional E-?\d+. */
  private static Double toDouble(String text) throws Refused {
    if (text.isEmpty()) return null;
    int whole = integerEnd(text, 0);
    require(whole > 0 && whole < text.length() && text.charAt(whole) == '.');
    int fraction = whole + 1;
    int end = fraction;
    while (end < text.length() && text.charAt(end) >= '0' && text.charAt(end) <= '9') end++;
    require(end > fraction);
    if (end < text.length()) {
      require(text.charAt(end) == 'E');
      require(integerEnd(text, end + 1) == text.length() && text.length() > end + 1);
    }
    return Double.parseDouble(text);
  }

  private static String emptyAsNull(String text) {
    return text.isEmpty() ? null : text;
  }

  private static boolean isWordChar(char ch) {
    return ch == '_' || (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z');
  }

  /** Java regex \s without UNICODE_CHARACTER_CLASS: [ \t\n\x0B\f\r]. */
  private static boolean isRegexSpace(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == 0x0B || ch == '\f' || ch == '\r';
  }

  private static boolean isLineTerminator(char ch) {
    return ch == '\n' || ch == '\r' || ch == '\u0085' || ch == '\u2028' || ch == '\u2029';
  }
}
