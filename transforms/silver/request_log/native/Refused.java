/*
 * Thrown inside a parse of StringFormParse or JsonFormParse: the record is not one the function
 * answers for, and is left to the expression parse (the function returns null). One shared
 * instance without a stack trace: refusing costs no allocation.
 */
package kafkaaudit.requestlog;

final class Refused extends Exception {
  private static final long serialVersionUID = 1L;
  static final Refused INSTANCE = new Refused();

  private Refused() {
    super(null, null, false, false);
  }

  /** Refuses unless ``condition`` holds. */
  static void require(boolean condition) throws Refused {
    if (!condition) throw INSTANCE;
  }
}
