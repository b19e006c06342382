package kafkaaudit.bronze;

import org.apache.spark.sql.api.java.UDF1;

/**
 * The node id a log record prints in its own prefix: the JVM's twin of {@code
 * transforms.bronze.records.node_id_in_message_by_expressions} (issue 15, forty-seventh part:
 * its seven substring searches over every line's message were a third of the CPU of bronze's
 * persisted layer).
 *
 * <p>The same answer for every text as {@code regexp_extract(message, _NODE_ID_PATTERN, 1)}
 * with "" as null: the first position where one of {@code PREFIXES} starts and is followed by
 * at least one character that is not a comma, a {@code ]} or Java's {@code \s}; the id is that
 * run of characters. No two prefixes can start at one position (none is a prefix of another),
 * so the regex's order among its alternatives decides nothing; a prefix followed by no id
 * character is no match there, as in the regex, and the search goes on. Candidates are found
 * with {@code String.indexOf} (vectorised by the JIT): a {@code [} for the bracketed prefixes,
 * and the two unbracketed ones. Null in, null out; null when there is no id.
 *
 * <p>{@code tests/spark/test_bronze.py} checks that the prefixes are the Python pattern's.
 */
public final class NodeIdInMessage implements UDF1<String, String> {
  private static final long serialVersionUID = 1L;
  static final String NODE = "nodeId=";
  static final String BROKER = "brokerId=";
  /** The prefixes that start with {@code [}, in the Python pattern's order. */
  static final String[] BRACKETED = {
    "[QuorumController id=", "[Token Manager on Node ", "[StandardAuthorizer ", "[KafkaServer id=",
    "[BrokerServer id=", "[ControllerServer id=", "[Broker id=", "[Controller id=", "[KafkaApi-",
    "[Worker clientId=",
  };

  @Override
  public String call(String message) {
    if (message == null) {
      return null;
    }
    int bracket = message.indexOf('[');
    int node = message.indexOf(NODE);
    int broker = message.indexOf(BROKER);
    for (int at = first(first(bracket, node), broker); at >= 0;
        at = first(first(bracket, node), broker)) {
      String id;
      if (at == node) {
        id = idAfter(message, at + NODE.length());
        node = message.indexOf(NODE, at + 1);
      } else if (at == broker) {
        id = idAfter(message, at + BROKER.length());
        broker = message.indexOf(BROKER, at + 1);
      } else {
        id = bracketedIdAt(message, at);
        bracket = message.indexOf('[', at + 1);
      }
      if (id != null) {
        return id;
      }
    }
    return null;
  }

  /** The smaller of two positions, -1 meaning none. */
  private static int first(int a, int b) {
    if (a < 0) {
      return b;
    }
    return b < 0 ? a : Math.min(a, b);
  }

  private static String bracketedIdAt(String message, int at) {
    for (String prefix : BRACKETED) {
      if (message.startsWith(prefix, at)) {
        String id = idAfter(message, at + prefix.length());
        if (id != null) {
          return id;
        }
      }
    }
    return null;
  }

  /** The run of id characters from {@code start}, or null when it is empty. */
  private static String idAfter(String message, int start) {
    int end = start;
    while (end < message.length() && !ends(message.charAt(end))) {
      end++;
    }
    return end > start ? message.substring(start, end) : null;
  }

  /** {@code [,\]\s]}: Java's {@code \s} is space, tab, newline, vertical tab, form feed, CR. */
  private static boolean ends(char c) {
    return c == ',' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\u000b'
        || c == '\f' || c == '\r';
  }
}
