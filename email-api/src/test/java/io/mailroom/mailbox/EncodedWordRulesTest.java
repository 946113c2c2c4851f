package io.mailroom.mailbox;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** RFC 2047 encoded words are judged by what a reader's mail client decodes them to. */
class EncodedWordRulesTest {

    /** Decodes to "Ann\r\nBcc: evil@example.net". */
    static final String CRLF_IN_BASE64 = "=?UTF-8?B?QW5uDQpCY2M6IGV2aWxAZXhhbXBsZS5uZXQ=?=";
    /** Decodes to "Support \u202Emoc.knab": a right-to-left override. */
    static final String BIDI_IN_Q = "=?UTF-8?Q?Support_=E2=80=AEmoc.knab?=";

    @Test
    void aNameWhoseEncodedWordHidesALineBreakIsRefused() {
        assertThat(MailboxRules.displayNameProblem(CRLF_IN_BASE64))
                .hasValue("has an RFC 2047 encoded word that decodes to a control character U+000D at index 3");
    }

    @Test
    void aNameWhoseEncodedWordHidesABidiOverrideIsRefused() {
        assertThat(MailboxRules.displayNameProblem(BIDI_IN_Q))
                .hasValue("has an RFC 2047 encoded word that decodes to a bidi control U+202E at index 8");
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "Dear =?utf-8?b?QW5uDQpCY2M6IGV2aWxAZXhhbXBsZS5uZXQ?= friend", // lower case, no padding, mid-text
            "=?ISO-8859-1?Q?Ann=0ABcc?=",                                    // another charset, a bare LF
            "=?UTF-8*en?Q?Ann=E2=80=8F?=",                                   // RFC 2231 language suffix, U+200F
            "=?UTF-8?B?PT9VVEYtOD9RP0Fubj0wRD89?=",                          // encodes "=?UTF-8?Q?Ann=0D?=": nested
    })
    void everyFormAReaderDecodesIsJudgedDecoded(String name) {
        assertThat(MailboxRules.displayNameProblem(name)).isPresent();
    }

    @ParameterizedTest
    @ValueSource(strings = {"=?x-unknown-charset?Q?Ann?=", "=?UTF-8?Q?Ann=ZZ?=", "=?UTF-8?B?QQ?=x=?UTF-8?B?/w==?="})
    void anEncodedWordThatCannotBeDecodedIsRefused(String name) {
        assertThat(MailboxRules.displayNameProblem(name)).isPresent();
    }

    @ParameterizedTest
    @ValueSource(strings = {"=?UTF-8?Q?Zo=C3=AB_Lee?=", "Ann =? Lee", "a=?b", "Ann ?= Lee"})
    void aCleanEncodedWordOrAnInnocentQuestionMarkIsAccepted(String name) {
        assertThat(MailboxRules.displayNameProblem(name)).isEmpty();
    }

    @Test
    void subjectsAreJudgedTheSameWay() {
        assertThat(MailboxRules.headerTextProblem("Your order " + CRLF_IN_BASE64)).isPresent();
        assertThat(MailboxRules.headerTextProblem("Your order =?UTF-8?Q?n=C2=B0_102?=")).isEmpty();
    }
}
