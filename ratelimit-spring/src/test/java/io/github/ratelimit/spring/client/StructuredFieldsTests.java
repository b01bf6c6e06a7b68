package io.github.ratelimit.spring.client;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class StructuredFieldsTests {

	@Test
	void listOfItemsWithParameters() {
		List<Object> list = StructuredFields.list("\"burst\";q=100;w=60, \"daily\";q=1000;w=86400");
		assertThat(list).hasSize(2);
		StructuredFields.Item first = (StructuredFields.Item) list.get(0);
		assertThat(first.value()).isEqualTo("burst");
		assertThat(first.integer("q")).isEqualTo(100L);
		assertThat(first.integer("w")).isEqualTo(60L);
		assertThat(((StructuredFields.Item) list.get(1)).integer("w")).isEqualTo(86400L);
	}

	@Test
	void everyBareItemType() {
		List<Object> list = StructuredFields.list("-42, 4.5, \"a \\\"q\\\" \\\\\", tok/en:x*, :AQID:, ?1, ?0");
		assertThat(list).extracting((member) -> ((StructuredFields.Item) member).value())
			.containsExactly(-42L, new BigDecimal("4.5"), "a \"q\" \\", new StructuredFields.Token("tok/en:x*"),
					list.get(4) instanceof StructuredFields.Item item ? item.value() : null, true, false);
		assertThat((byte[]) ((StructuredFields.Item) list.get(4)).value()).containsExactly(1, 2, 3);
	}

	@Test
	void innerListsAndBooleanParameters() {
		List<Object> list = StructuredFields.list("(\"a\" b);x, c;flag;n=2");
		StructuredFields.InnerList inner = (StructuredFields.InnerList) list.get(0);
		assertThat(inner.items()).extracting(StructuredFields.Item::value)
			.containsExactly("a", new StructuredFields.Token("b"));
		assertThat(inner.parameters()).containsEntry("x", true);
		assertThat(((StructuredFields.Item) list.get(1)).parameters()).containsEntry("flag", true)
			.containsEntry("n", 2L);
	}

	@Test
	void dictionaryKeysWithAndWithoutValues() {
		Map<String, Object> dictionary = StructuredFields.dictionary("a=1, b;x=2, c=(1 2), a=3");
		assertThat(dictionary.keySet()).containsExactly("b", "c", "a");
		assertThat(((StructuredFields.Item) dictionary.get("a")).value()).isEqualTo(3L);
		assertThat(((StructuredFields.Item) dictionary.get("b")).value()).isEqualTo(true);
		assertThat(dictionary.get("c")).isInstanceOf(StructuredFields.InnerList.class);
	}

	@Test
	void spacesAroundTheFieldAndTabsBetweenMembers() { // RFC 9651 4.2: leading and trailing SP discarded
		assertThat(StructuredFields.list("  a ,\tb  ")).hasSize(2);
		assertThat(StructuredFields.list("")).isEmpty();
	}

	/**
	 * Accepted or refused as an independent RFC 8941 parser (greenbytes) does, on valid and odd fields alike (not
	 * spaces around the whole field: the RFC discards them, that parser expects them gone).
	 */
	@ParameterizedTest
	@ValueSource(strings = { "\"p\";r=1;t=2", "a, b;x=?0, (c d);y=:AQID:", "1.5, -0.125", "*tok", "a;b;c=\"\"",
			"a,", "a,,b", "1234567890123456", "1.2345", "a b", "\"x\";r=1;;", "(a", "a=1", "\"\\x\"", "?",
			"-", "a;*=1", "a\t,b", "((a))", "1e5", "\u0000" })
	void agreesWithAnIndependentParser(String field) {
		boolean ours = accepts(() -> StructuredFields.list(field));
		boolean theirs = accepts(() -> org.greenbytes.http.sfv.Parser.parseList(field));
		assertThat(ours).as(field).isEqualTo(theirs);
	}

	private static boolean accepts(Runnable parse) {
		try {
			parse.run();
			return true;
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "a,", "a,,b", "\"unterminated", "\"bad\\escape\"", "1234567890123456", "1.2345",
			"1234567890123.5", "1.", "-", "a;Q=1", "?2", ":not base64!:", ":AQID", "(a b", "(a,b)", "\u00e9",
			"\"caf\u00e9\"", "a b", "a;=1", "\t a" })
	void refusesOddInput(String field) {
		assertThatIllegalArgumentException().isThrownBy(() -> StructuredFields.list(field));
	}

}
