/*
 * The 2.8+ JSON form of "Completed request:" (KIP-673) parsed in one Jackson pass, for the
 * records on which transforms/silver/request_log/json_form.py would find nothing to quarantine
 * (issue 15).
 *
 * call(body) takes the text after "Completed request:" and returns the struct of FIELDS, or
 * null when the record is not one it can answer for: then the expression parse (Spark's
 * from_json with json_form.PARSED_SCHEMA, its checks, get_json_object and the errorCode regex)
 * computes the record, as for every record without this class. It answers only where its
 * values are the expression parse's, so each condition below is conservative (a record it
 * refuses may still parse; one it answers for always gives the same values):
 *
 *  - strict JSON (Jackson's defaults: no single quotes, comments, NaN, leading zeros, unquoted
 *    names or control characters, which Spark's options may allow), at most 64 levels deep and
 *    numbers of at most 100 characters (within any limit Spark sets), one object, then nothing
 *    but spaces (U+0020);
 *  - no key of REQUEST_LOG_SCHEMA, of the requestHeader or of the clientInformation given
 *    twice, no other key equal to one of them but for case, no "_corrupt_record" key;
 *  - every key json_form._REQUIRED lists present and not null; each typed key of the type
 *    Spark reads it as (ints within range, longs within range, booleans, numbers for doubles,
 *    objects for the two structs), read with the same Jackson calls as Spark's JacksonParser;
 *  - string keys: a JSON string is its text; an object or array is Jackson's compact copy of
 *    it (copyCurrentStructure, UTF-8), answered only when that copy is the record's own text
 *    character for character (then Spark's copy and its exact-string option agree); any other
 *    value (a number, a boolean) for a string key is refused;
 *  - the response an object or "" (then no error codes); its top-level errorCode absent, or
 *    given once as an integer token; found_error_codes is every match of
 *    "errorCode"\s*:\s*(-?\d+) in the response text, each an int or null when out of range
 *    (Spark's try_cast), as parse.found_error_codes computes it.
 */
package kafkaaudit.requestlog;

import static kafkaaudit.requestlog.Refused.require;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;

public final class JsonFormParse implements UDF1<String, Row> {
  private static final long serialVersionUID = 1L;

  /** The struct's fields, in order: (name, Spark SQL type); silver column names. */
  public static final String[][] FIELDS = {
    {"is_forwarded", "boolean"}, {"api_key", "int"}, {"api_version", "int"},
    {"correlation_id", "int"}, {"client_id", "string"}, {"api_key_name", "string"},
    {"api_version_deprecated", "boolean"}, {"request_json", "string"},
    {"response_json", "string"}, {"connection_id", "string"}, {"total_time_ms", "double"},
    {"request_queue_time_ms", "double"}, {"local_time_ms", "double"},
    {"remote_time_ms", "double"}, {"throttle_time_ms", "bigint"},
    {"response_queue_time_ms", "double"}, {"send_time_ms", "double"},
    {"security_protocol", "string"}, {"principal", "string"}, {"listener", "string"},
    {"client_software_name", "string"}, {"client_software_version", "string"},
    {"temporary_memory_bytes", "bigint"}, {"message_conversions_time_ms", "double"},
    {"error_code", "int"}, {"found_error_codes", "array<int>"},
  };

  /** Top-level keys (REQUEST_LOG_SCHEMA's, then the corrupt-record column): index = key id. */
  private static final String[] ROOT = {
    "isForwarded", "requestHeader", "request", "response", "connection", "totalTimeMs",
    "requestQueueTimeMs", "localTimeMs", "remoteTimeMs", "throttleTimeMs",
    "responseQueueTimeMs", "sendTimeMs", "securityProtocol", "principal", "listener",
    "clientInformation", "temporaryMemoryBytes", "messageConversionsTime", "_corrupt_record",
  };
  /** Where each key's value goes in FIELDS (-1: handled apart). */
  private static final int[] ROOT_FIELD = {0, -1, -1, -1, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
    19, -1, 22, 23, -1};
  private static final int HEADER = 1;
  private static final int REQUEST = 2;
  private static final int RESPONSE = 3;
  private static final int CLIENT = 15;
  private static final int CORRUPT = 18;
  /** Keys that must be present and not null: every one but the optional and the corrupt. */
  private static final int REQUIRED = ((1 << 15) - 1);
  private static final String[] HEADER_KEYS = {
    "requestApiKey", "requestApiVersion", "correlationId", "clientId", "requestApiKeyName",
    "requestApiVersionDeprecated",
  };
  private static final int[] HEADER_FIELD = {1, 2, 3, 4, 5, 6};
  private static final int[] HEADER_REQUIRED_FIELDS = {1, 2, 3, 5};
  private static final String[] CLIENT_KEYS = {"softwareName", "softwareVersion"};
  private static final int[] CLIENT_FIELD = {20, 21};
  private static final String ERROR_CODE = "errorCode";
  private static final String ERROR_CODE_KEY = "\"errorCode\"";

  private static final StreamReadConstraints LIMITS =
      StreamReadConstraints.builder().maxNestingDepth(64).maxNumberLength(100).build();
  private static final JsonFactory FACTORY =
      new JsonFactoryBuilder().streamReadConstraints(LIMITS).build();
  /**
   * For the response's second read, which starts while the record's parser is open. A factory's
   * parser borrows its buffers from the thread's one recycler (Jackson's default pool), whose
   * buffers the record's parser holds then: the second parser allocated a new 8 KB token buffer
   * for every record (5 GB in a 1M-line run, issue 15, forty-seventh part). This factory's own
   * pool lends it buffers that are returned when it closes. The same limits.
   */
  private static final JsonFactory RESPONSE_FACTORY =
      new JsonFactoryBuilder()
          .streamReadConstraints(LIMITS)
          .recyclerPool(JsonRecyclerPools.newConcurrentDequePool())
          .build();

  @Override
  public Row call(String body) {
    if (body == null) return null;
    try {
      return parse(body);
    } catch (Refused | IOException | RuntimeException refused) {
      return null;
    }
  }

  private static Row parse(String body) throws Refused, IOException {
    Object[] out = new Object[FIELDS.length];
    String[] bodies = new String[2];
    int seen;
    try (JsonParser p = FACTORY.createParser(body)) {
      require(p.nextToken() == JsonToken.START_OBJECT);
      seen = walk(p, ROOT, key -> {
        require(key != CORRUPT);
        rootValue(p, body, key, out, bodies);
      });
      // The walk ends on the root's END_OBJECT (Jackson fails on anything else): then spaces.
      int end = (int) p.currentLocation().getCharOffset();
      for (int i = end; i < body.length(); i++) require(body.charAt(i) == ' ');
    }
    for (int key = 0; key < ROOT.length; key++) {
      if ((REQUIRED & (1 << key)) != 0) require(present(key, out, bodies, seen));
    }
    out[7] = emptyAsNull(bodies[0]);
    out[8] = emptyAsNull(bodies[1]);
    return RowFactory.create(out);
  }

  /** Whether a required key was given, not null. */
  private static boolean present(int key, Object[] out, String[] bodies, int seen) {
    if (key == HEADER) return (seen & (1 << HEADER)) != 0; // its fields are checked apart
    if (key == REQUEST) return bodies[0] != null;
    if (key == RESPONSE) return bodies[1] != null;
    return out[ROOT_FIELD[key]] != null;
  }

  private static void rootValue(JsonParser p, String body, int key, Object[] out, String[] bodies)
      throws Refused, IOException {
    switch (key) {
      case HEADER -> header(p, body, out);
      case CLIENT -> clientInformation(p, body, out);
      case REQUEST -> bodies[0] = string(p, body);
      case RESPONSE -> {
        bodies[1] = string(p, body);
        boolean object = p.currentToken() == JsonToken.END_OBJECT;
        require(bodies[1] == null || bodies[1].isEmpty() || object);
        errorCodes(bodies[1], out);
      }
      default -> out[ROOT_FIELD[key]] = typed(p, body, FIELDS[ROOT_FIELD[key]][1]);
    }
  }

  private static void header(JsonParser p, String body, Object[] out) throws Refused, IOException {
    require(p.currentToken() == JsonToken.START_OBJECT);
    walk(p, HEADER_KEYS, key -> {
      int field = HEADER_FIELD[key];
      out[field] = typed(p, body, FIELDS[field][1]);
    });
    for (int field : HEADER_REQUIRED_FIELDS) require(out[field] != null);
  }

  private static void clientInformation(JsonParser p, String body, Object[] out)
      throws Refused, IOException {
    if (p.currentToken() == JsonToken.VALUE_NULL) return;
    require(p.currentToken() == JsonToken.START_OBJECT);
    walk(p, CLIENT_KEYS, key -> out[CLIENT_FIELD[key]] = string(p, body));
  }

  /** Reads one key's value (the parser at it), by its index in the walked object's keys. */
  private interface KeyReader {
    void read(int key) throws Refused, IOException;
  }

  /**
   * The fields of the object at the parser (its START_OBJECT read), to its END_OBJECT: each of
   * ``keys`` read once by ``reader`` (given twice: refused), any other key skipped unless it is
   * one of them but for case (refused). Returns the keys seen, bit i for keys[i].
   */
  private static int walk(JsonParser p, String[] keys, KeyReader reader)
      throws Refused, IOException {
    int seen = 0;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      p.nextToken();
      int key = indexOf(keys, name);
      if (key < 0) {
        requireNoTwin(keys, name);
        p.skipChildren();
        continue;
      }
      require((seen & (1 << key)) == 0);
      seen |= 1 << key;
      reader.read(key);
    }
    return seen;
  }

  /** The value at the parser as Spark's converter for ``type`` reads it; JSON null is null. */
  private static Object typed(JsonParser p, String body, String type) throws Refused, IOException {
    JsonToken token = p.currentToken();
    if (token == JsonToken.VALUE_NULL) return null;
    switch (type) {
      case "string":
        return string(p, body);
      case "boolean":
        require(token == JsonToken.VALUE_TRUE || token == JsonToken.VALUE_FALSE);
        return token == JsonToken.VALUE_TRUE;
      case "int":
        require(token == JsonToken.VALUE_NUMBER_INT);
        return p.getIntValue(); // out of range: an exception, as in Spark (refused)
      case "bigint":
        require(token == JsonToken.VALUE_NUMBER_INT);
        return p.getLongValue();
      case "double":
        require(token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT);
        return p.getDoubleValue();
      default:
        throw Refused.INSTANCE;
    }
  }

  /** A string key's value: a string's text, an object's or array's exact compact text. */
  private static String string(JsonParser p, String body) throws Refused, IOException {
    JsonToken token = p.currentToken();
    if (token == JsonToken.VALUE_NULL) return null;
    if (token == JsonToken.VALUE_STRING) return p.getText();
    require(token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY);
    int start = (int) p.currentTokenLocation().getCharOffset();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
    try (JsonGenerator g = FACTORY.createGenerator(bytes, JsonEncoding.UTF8)) {
      g.copyCurrentStructure(p);
    }
    String copy = bytes.toString(StandardCharsets.UTF_8);
    int end = (int) p.currentLocation().getCharOffset();
    require(end - start == copy.length() && body.startsWith(copy, start));
    return copy;
  }

  /**
   * error_code (the response object's top-level errorCode, get_json_object's "$.errorCode"
   * cast to int) and found_error_codes (the regex's matches, each cast to int). The response's
   * tokens were read by string(): its top level is read again from its text.
   */
  private static void errorCodes(String response, Object[] out) throws Refused, IOException {
    if (response == null || response.isEmpty()) return;
    out[24] = topLevelErrorCode(response);
    out[25] = foundErrorCodes(response);
  }

  private static Integer topLevelErrorCode(String response) throws Refused, IOException {
    Integer code = null;
    boolean seen = false;
    try (JsonParser p = RESPONSE_FACTORY.createParser(response)) {
      require(p.nextToken() == JsonToken.START_OBJECT);
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        boolean isCode = ERROR_CODE.equals(p.currentName());
        JsonToken token = p.nextToken();
        if (!isCode) {
          p.skipChildren();
          continue;
        }
        require(!seen && token == JsonToken.VALUE_NUMBER_INT);
        seen = true;
        code = toInt(p.getText());
      }
    }
    return code;
  }

  /** Every match of "errorCode"\s*:\s*(-?\d+), as Java's regex finds them, each as an int. */
  private static List<Integer> foundErrorCodes(String text) {
    List<Integer> codes = new ArrayList<>();
    int from = 0;
    while (true) {
      int at = text.indexOf(ERROR_CODE_KEY, from);
      if (at < 0) return codes;
      int i = skipSpaces(text, at + ERROR_CODE_KEY.length());
      if (i < text.length() && text.charAt(i) == ':') {
        int start = skipSpaces(text, i + 1);
        int digits = start < text.length() && text.charAt(start) == '-' ? start + 1 : start;
        int end = digits;
        while (end < text.length() && text.charAt(end) >= '0' && text.charAt(end) <= '9') end++;
        if (end > digits) {
          codes.add(toInt(text.substring(start, end)));
          from = end;
          continue;
        }
      }
      from = at + 1;
    }
  }

  /** Spark's try_cast of "-?\d+" to int: null when out of range. */
  private static Integer toInt(String digits) {
    try {
      return Integer.valueOf(digits);
    } catch (NumberFormatException outOfRange) {
      return null;
    }
  }

  private static int skipSpaces(String text, int i) {
    while (i < text.length() && isRegexSpace(text.charAt(i))) i++;
    return i;
  }

  private static int indexOf(String[] keys, String name) {
    for (int i = 0; i < keys.length; i++) if (keys[i].equals(name)) return i;
    return -1;
  }

  /** A key that is one of ``keys`` but for case is refused (Spark may match it). */
  private static void requireNoTwin(String[] keys, String name) throws Refused {
    String lower = name.toLowerCase(Locale.ROOT);
    for (String key : keys) require(!key.toLowerCase(Locale.ROOT).equals(lower));
  }

  private static String emptyAsNull(String text) {
    return text == null || text.isEmpty() ? null : text;
  }

  /** Java regex \s without UNICODE_CHARACTER_CLASS: [ \t\n\x0B\f\r]. */
  private static boolean isRegexSpace(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == 0x0B || ch == '\f' || ch == '\r';
  }
}
