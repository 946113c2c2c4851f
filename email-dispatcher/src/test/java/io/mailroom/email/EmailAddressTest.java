package io.mailroom.email;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EmailAddressTest {

    @Test
    void acceptsAPlainAddressAndLowerCasesTheDomainOnly() {
        EmailAddress a = EmailAddress.of("Ann.Lee+orders@Example.COM", "Ann Lee");
        assertThat(a.address()).isEqualTo("Ann.Lee+orders@example.com");
        assertThat(a.displayName()).isEqualTo("Ann Lee");
        assertThat(a.domain()).isEqualTo("example.com");
        assertThat(a.masked()).isEqualTo("A***@example.com");
    }

    @Test
    void blankDisplayNameMeansNone() {
        assertThat(EmailAddress.of("ann@example.com", "  ").displayName()).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "", "ann", "ann@", "@example.com", "ann@@example.com", "a@b@example.com", "ann @example.com",
            "ann@example.com\r\nBcc: eve@example.org", "ann@localhost", "ann@[127.0.0.1]", "ann@10.0.0.1",
            "\"ann lee\"@example.com", ".ann@example.com", "ann.@example.com", "an..n@example.com",
            "ann@-example.com", "ann@exa_mple.com", "ann@example..com", "anné@example.com", "ann@exämple.com",
            "Ann <ann@example.com>", "ann@example.com (Ann)"})
    void rejectsAnythingButAStrictPlainAddress(String address) {
        assertThatThrownBy(() -> EmailAddress.of(address))
                .isInstanceOf(InvalidEmailException.class)
                .extracting(e -> ((InvalidEmailException) e).field()).isEqualTo("address");
    }

    @Test
    void rejectsOverlongParts() {
        assertThatThrownBy(() -> EmailAddress.of("a".repeat(65) + "@example.com")).isInstanceOf(InvalidEmailException.class);
        assertThatThrownBy(() -> EmailAddress.of("ann@" + "a".repeat(250) + ".com")).isInstanceOf(InvalidEmailException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"Ann\r\nBcc: eve@example.org", "Ann\nX", "Ann\u0000", "Ann\u202Emoc.live", "Ann\u2028", "Ann\uD800", "Ann\u200F", "Ann\u061C", "Ann\u2067x"})
    void rejectsControlCharactersInTheDisplayName(String name) {
        assertThatThrownBy(() -> EmailAddress.of("ann@example.com", name))
                .isInstanceOf(InvalidEmailException.class)
                .hasMessageStartingWith("displayName: contains")
                .extracting(e -> ((InvalidEmailException) e).field()).isEqualTo("displayName");
    }

    @Test
    void unicodeDisplayNamesAreFine() {
        assertThat(EmailAddress.of("zoe@example.com", "Zoë Ünal 😀").displayName()).isEqualTo("Zoë Ünal 😀");
    }

    @Test
    void parsesAMailboxFromConfiguration() {
        EmailAddress a = EmailAddress.parseMailbox("Example Shop <Shop@Example.com>");
        assertThat(a.address()).isEqualTo("Shop@example.com");
        assertThat(a.displayName()).isEqualTo("Example Shop");
        assertThat(EmailAddress.parseMailbox("shop@example.com").displayName()).isNull();
        assertThatThrownBy(() -> EmailAddress.parseMailbox("Shop <shop@example.com")).isInstanceOf(InvalidEmailException.class);
        assertThatThrownBy(() -> EmailAddress.parseMailbox("a@example.com, b@example.com")).isInstanceOf(InvalidEmailException.class);
    }
}
