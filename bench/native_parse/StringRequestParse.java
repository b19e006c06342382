/*
 * Spike for issue 15 (thirty-eighth part), run by bench/native_parse.py: NOT pipeline code.
 *
 * One scan, no regex, of a Kafka 1.0-2.7 string-form request-log record ("RequestHeader(...)
 * -- <request>,response:<response> from connection <id>;totalTime:...,listener:..."), the text
 * after "Completed request:", as a Spark Java UDF returning one struct. It measures what a
 * JVM-native parse of the string form would cost against the pipeline's Spark-expression parse
 * (transforms/silver/request_log/string_form.py). It fills the columns that parse fills for a
 * well-formed record (header, request/response text, connection id, metrics, the top-level
 * error_code of the response and every error_code in it); it has none of the quarantine
 * checks and returns nulls for a record whose fixed parts are missing.
 */

import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;
import java.util.ArrayList;

public class StringRequestParse implements UDF1<String, Row> {
  private static final String SEP = " from connection ";
  private static final String[] KEYS = {";totalTime:", ",requestQueueTime:", ",localTime:", ",remoteTime:",
      ",throttleTime:", ",responseQueueTime:", ",sendTime:", ",securityProtocol:", ",principal:", ",listener:"};

  private static Double dbl(String s) { try { return Double.valueOf(s); } catch (RuntimeException e) { return null; } }
  private static Long lng(String s) { try { return Long.valueOf(s.trim()); } catch (RuntimeException e) { return null; } }
  private static Integer integer(String s) { try { return Integer.valueOf(s.trim()); } catch (RuntimeException e) { return null; } }

  private static boolean word(char c) { return Character.isLetterOrDigit(c) && c < 128 || c == '_'; }

  @Override
  public Row call(String body) {
    if (body == null) return null;
    Object[] out = new Object[24];
    int cut = body.lastIndexOf(SEP);
    if (cut < 0 || !body.startsWith("RequestHeader(apiKey=")) return RowFactory.create(out);
    String before = body.substring(0, cut), tail = body.substring(cut + SEP.length());
    int a = before.indexOf(", apiVersion="), b = before.indexOf(", clientId=", a), c = before.indexOf(", correlationId=", b);
    int d = before.indexOf(") -- ", c);
    if (a < 0 || b < 0 || c < 0 || d < 0) return RowFactory.create(out);
    out[0] = before.substring(21, a);
    out[1] = integer(before.substring(a + 13, b));
    out[2] = before.substring(b + 11, c);
    out[3] = integer(before.substring(c + 16, d));
    String rest = before.substring(d + 5);
    int r = rest.indexOf(",response:");
    out[4] = r < 0 ? "" : rest.substring(0, r);
    String response = r < 0 ? "" : rest.substring(r + 10);
    out[5] = response;
    int[] at = new int[KEYS.length];
    int from = 0;
    for (int i = 0; i < KEYS.length; i++) {
      at[i] = tail.indexOf(KEYS[i], from);
      if (at[i] < 0) return RowFactory.create(out);
      from = at[i] + KEYS[i].length();
    }
    out[6] = tail.substring(0, at[0]);
    for (int i = 0; i < 7; i++) {
      String v = tail.substring(at[i] + KEYS[i].length(), at[i + 1]);
      out[7 + i] = i == 4 ? (Object) lng(v) : (Object) dbl(v);
    }
    out[14] = tail.substring(at[7] + KEYS[7].length(), at[8]);
    out[15] = tail.substring(at[8] + KEYS[8].length(), at[9]);
    String after = tail.substring(at[9] + KEYS[9].length());
    int comma = after.indexOf(',');
    out[16] = comma < 0 ? after : after.substring(0, comma);
    if (comma >= 0) {
      String opt = after.substring(comma);
      String ci = ",clientInformation:ClientInformation(softwareName=";
      if (opt.startsWith(ci)) {
        int v = opt.indexOf(", softwareVersion=", ci.length()), e = opt.indexOf(')', v);
        out[17] = opt.substring(ci.length(), v);
        out[18] = opt.substring(v + 18, e);
        opt = opt.substring(e + 1);
      }
      if (opt.startsWith(",temporaryMemoryBytes:")) {
        int e = opt.indexOf(',', 1);
        out[19] = lng(e < 0 ? opt.substring(22) : opt.substring(22, e));
        opt = e < 0 ? "" : opt.substring(e);
      }
      if (opt.startsWith(",messageConversionsTime:")) out[20] = dbl(opt.substring(24));
    }
    ArrayList<Integer> codes = new ArrayList<>();
    Integer top = null;
    int depth = 0;
    for (int i = 0; i < response.length(); i++) {
      char ch = response.charAt(i);
      if (ch == '{' || ch == '[') depth++;
      else if (ch == '}' || ch == ']') depth--;
      else if (ch == 'e' && response.startsWith("error_code=", i) && (i == 0 || !word(response.charAt(i - 1)))) {
        int j = i + 11, k = j;
        if (k < response.length() && response.charAt(k) == '-') k++;
        while (k < response.length() && Character.isDigit(response.charAt(k))) k++;
        if (k > j) {
          Integer v = integer(response.substring(j, k));
          if (v != null) {
            codes.add(v);
            if (depth == 1 && top == null && (response.charAt(i - 1) == ',' || response.charAt(i - 1) == '{')
                && (k == response.length() || response.charAt(k) == ',' || response.charAt(k) == '}')) top = v;
          }
        }
        i = k - 1;
      }
    }
    out[21] = top;
    out[22] = codes;
    out[23] = Boolean.TRUE;
    return RowFactory.create(out);
  }
}
