package io.mailroom.email.dkim;

import java.io.IOException;
import java.util.List;

/** Looks up a DNS name's TXT records; injectable so the start-up check is tested without a network. */
@FunctionalInterface
public interface TxtLookup {

    /**
     * @return each TXT record's text, its character-strings joined (RFC 6376 §3.6.2.2); empty when
     *         the name or its TXT records do not exist
     * @throws IOException when DNS could not be asked or did not answer in time
     */
    List<String> txt(String name) throws IOException;
}
