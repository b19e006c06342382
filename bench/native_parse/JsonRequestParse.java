/*
 * Spike for issue 15 (thirty-eighth part), run by bench/native_parse.py: NOT pipeline code.
 *
 * One Jackson pass over a KIP-673 (Kafka 2.8+) request-log record, the text after
 * "Completed request:", as a Spark Java UDF returning one struct. It measures what a
 * JVM-native parse of the JSON form would cost against the pipeline's Spark-expression parse
 * (transforms/silver/request_log/json_form.py, parse.py). It fills the columns that parse
 * fills for a well-formed record (the typed fields, request/response as compact JSON text, the
 * top-level response errorCode and every errorCode below it); it has none of the quarantine
 * checks. A pipeline version would return its fields only for records that pass every check
 * and leave the rest to the expression parse, or port the checks.
 */

import com.fasterxml.jackson.core.*;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;
import java.io.StringWriter;
import java.util.ArrayList;

public class JsonRequestParse implements UDF1<String, Row> {
  private static final JsonFactory F = new JsonFactory();

  private static String copy(JsonParser p, ArrayList<Integer> codes, Integer[] top) throws java.io.IOException {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_STRING) return p.getText();
    StringWriter w = new StringWriter(256);
    try (JsonGenerator g = F.createGenerator(w)) {
      int depth = 0;
      String field = null;
      do {
        t = p.currentToken();
        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) depth++;
        else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) depth--;
        else if (t == JsonToken.FIELD_NAME) field = p.currentName();
        else if (t == JsonToken.VALUE_NUMBER_INT && codes != null && "errorCode".equals(field)) {
          int v = p.getIntValue();
          codes.add(v);
          if (depth == 1 && top[0] == null) top[0] = v;
        }
        g.copyCurrentEvent(p);
        if (depth == 0) break;
      } while (p.nextToken() != null);
    }
    return w.toString();
  }

  @Override
  public Row call(String body) throws Exception {
    if (body == null) return null;
    Object[] out = new Object[27];
    ArrayList<Integer> codes = new ArrayList<>();
    Integer[] top = new Integer[1];
    boolean ok = true;
    try (JsonParser p = F.createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) return null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String k = p.currentName();
        JsonToken v = p.nextToken();
        switch (k) {
          case "isForwarded": out[0] = v.isBoolean() ? p.getBooleanValue() : null; break;
          case "requestHeader":
            if (v == JsonToken.START_OBJECT) {
              while (p.nextToken() == JsonToken.FIELD_NAME) {
                String h = p.currentName();
                JsonToken hv = p.nextToken();
                switch (h) {
                  case "requestApiKey": out[1] = hv.isNumeric() ? p.getIntValue() : null; break;
                  case "requestApiVersion": out[2] = hv.isNumeric() ? p.getIntValue() : null; break;
                  case "correlationId": out[3] = hv.isNumeric() ? p.getIntValue() : null; break;
                  case "clientId": out[4] = p.getValueAsString(); break;
                  case "requestApiKeyName": out[5] = p.getValueAsString(); break;
                  case "requestApiVersionDeprecated": out[6] = hv.isBoolean() ? p.getBooleanValue() : null; break;
                  default: p.skipChildren();
                }
              }
            } else p.skipChildren();
            break;
          case "request": out[7] = copy(p, null, null); break;
          case "response": out[8] = copy(p, codes, top); break;
          case "connection": out[9] = p.getValueAsString(); break;
          case "totalTimeMs": out[10] = v.isNumeric() ? p.getDoubleValue() : null; break;
          case "requestQueueTimeMs": out[11] = v.isNumeric() ? p.getDoubleValue() : null; break;
          case "localTimeMs": out[12] = v.isNumeric() ? p.getDoubleValue() : null; break;
          case "remoteTimeMs": out[13] = v.isNumeric() ? p.getDoubleValue() : null; break;
          case "throttleTimeMs": out[14] = v.isNumeric() ? p.getLongValue() : null; break;
          case "responseQueueTimeMs": out[15] = v.isNumeric() ? p.getDoubleValue() : null; break;
          case "sendTimeMs": out[16] = v.isNumeric() ? p.getDoubleValue() : null; break;
          case "securityProtocol": out[17] = p.getValueAsString(); break;
          case "principal": out[18] = p.getValueAsString(); break;
          case "listener": out[19] = p.getValueAsString(); break;
          case "clientInformation":
            if (v == JsonToken.START_OBJECT) {
              while (p.nextToken() == JsonToken.FIELD_NAME) {
                String h = p.currentName();
                p.nextToken();
                if (h.equals("softwareName")) out[20] = p.getValueAsString();
                else if (h.equals("softwareVersion")) out[21] = p.getValueAsString();
                else p.skipChildren();
              }
            } else p.skipChildren();
            break;
          case "temporaryMemoryBytes": out[22] = v.isNumeric() ? p.getLongValue() : null; break;
          case "messageConversionsTime": out[23] = v.isNumeric() ? p.getDoubleValue() : null; break;
          default: p.skipChildren();
        }
      }
      ok = p.nextToken() == null;
    } catch (JsonProcessingException e) {
      ok = false;
    }
    out[24] = top[0];
    out[25] = codes;
    out[26] = ok;
    return RowFactory.create(out);
  }
}
