package io.mailroom.email;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** The body size is counted without encoding, and counts what encoding would give. */
class Utf8LengthTest {

    @ParameterizedTest
    @ValueSource(strings = {"", "plain ascii\r\n\t", "Nguyễn Văn Anh", "ß € 漢字", "😀 emoji 👍🏽", "\u007f\u0080\u07ff\u0800\uffff",
            "lone \ud800 high", "lone \udc00 low", "at the end \ud83d", "\ude00 reversed \ud83d"})
    void countsWhatTheJdkEncodes(String s) {
        assertThat(Email.utf8Length(s)).isEqualTo(s.getBytes(StandardCharsets.UTF_8).length);
    }
}
