package io.mailroom.delivery;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AddressesTest {

    @Test
    void lowerCasesTrimsAndDropsTheDisplayName() {
        assertThat(Addresses.normalize("  Ann.Lee@Example.COM ")).isEqualTo("ann.lee@example.com");
        assertThat(Addresses.normalize("Nguyễn Thị Ánh <Anh@Example.vn>")).isEqualTo("anh@example.vn");
    }

    @Test
    void internationalDomainsBecomeTheirAsciiForm() {
        assertThat(Addresses.normalize("anh@bücher.example")).isEqualTo("anh@xn--bcher-kva.example");
    }

    @Test
    void refusesWhatIsNoAddressNamingIt() {
        assertThatThrownBy(() -> Addresses.normalize("no-at-sign")).hasMessageContaining("'no-at-sign'");
        assertThatThrownBy(() -> Addresses.normalize("a b@example.com")).hasMessageContaining("not an email address");
        assertThatThrownBy(() -> Addresses.normalize("@example.com")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Addresses.normalize(null)).hasMessageContaining("required");
    }
}
