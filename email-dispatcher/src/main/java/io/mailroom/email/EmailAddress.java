package io.mailroom.email;

import jakarta.mail.internet.AddressException;
import jakarta.mail.internet.InternetAddress;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * One mailbox: a bare address plus an optional display name, valid by construction.
 *
 * <p>The address is checked more strictly than RFC 5322 allows, on purpose: ASCII only (an
 * internationalised domain must be given in its punycode form), a dot-atom local part of at most
 * 64 characters (no quoted strings, no comments), a domain of at least two LDH labels, at most 254
 * characters in all; then Jakarta Mail's strict parser must agree. The domain is lower-cased. The
 * display name may be any Unicode text but no control character (CR/LF would allow header
 * injection), no lone surrogate and no bidi override.
 */
public record EmailAddress(String address, String displayName) {

    public static final int MAX_ADDRESS_LENGTH = 254;
    public static final int MAX_LOCAL_PART_LENGTH = 64;
    public static final int MAX_DISPLAY_NAME_LENGTH = 200;

    private static final Pattern LOCAL_PART = Pattern.compile("[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*");
    private static final Pattern DOMAIN_LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");

    public EmailAddress {
        address = normalise(address);
        if (displayName != null) {
            if (displayName.isBlank()) {
                displayName = null;
            } else {
                int bad = Text.firstForbiddenInHeader(displayName);
                if (bad >= 0) {
                    throw new InvalidEmailException("displayName", "contains " + Text.describe(displayName, bad));
                }
                displayName = displayName.strip();
                if (displayName.length() > MAX_DISPLAY_NAME_LENGTH) {
                    throw new InvalidEmailException("displayName", "longer than " + MAX_DISPLAY_NAME_LENGTH + " characters");
                }
            }
        }
    }

    public static EmailAddress of(String address) {
        return new EmailAddress(address, null);
    }

    public static EmailAddress of(String address, String displayName) {
        return new EmailAddress(address, displayName);
    }

    /** Parses {@code shop@example.com} or {@code Example Shop <shop@example.com>} (e.g. from configuration). */
    public static EmailAddress parseMailbox(String mailbox) {
        if (mailbox == null || mailbox.isBlank()) {
            throw new InvalidEmailException("address", "is missing");
        }
        try {
            InternetAddress parsed = new InternetAddress(mailbox.strip(), true);
            if (parsed.isGroup()) {
                throw new InvalidEmailException("address", "a group is not a mailbox");
            }
            return new EmailAddress(parsed.getAddress(), parsed.getPersonal());
        } catch (AddressException e) {
            throw new InvalidEmailException("address", "not a valid mailbox");
        }
    }

    public String domain() {
        return address.substring(address.indexOf('@') + 1);
    }

    /** {@code a***@example.com}: enough for an operator to tell recipients apart in a log, no more. */
    public String masked() {
        return address.charAt(0) + "***@" + domain();
    }

    private static String normalise(String address) {
        if (address == null || address.isBlank()) {
            throw new InvalidEmailException("address", "is missing");
        }
        if (address.length() > MAX_ADDRESS_LENGTH) {
            throw new InvalidEmailException("address", "longer than " + MAX_ADDRESS_LENGTH + " characters");
        }
        for (int i = 0; i < address.length(); i++) {
            char c = address.charAt(i);
            if (c <= 0x20 || c >= 0x7F) {
                // Also rejects CR/LF and spaces; internationalised addresses need SMTPUTF8, which we do not use.
                throw new InvalidEmailException("address", "contains a character outside printable ASCII at index " + i);
            }
        }
        int at = address.lastIndexOf('@');
        if (at <= 0 || at == address.length() - 1 || address.indexOf('@') != at) {
            throw new InvalidEmailException("address", "must be local-part@domain");
        }
        String local = address.substring(0, at);
        String domain = address.substring(at + 1).toLowerCase(Locale.ROOT);
        if (local.length() > MAX_LOCAL_PART_LENGTH || !LOCAL_PART.matcher(local).matches()) {
            throw new InvalidEmailException("address", "local part is not a plain dot-atom of at most " + MAX_LOCAL_PART_LENGTH + " characters");
        }
        String[] labels = domain.split("\\.", -1);
        if (labels.length < 2) {
            throw new InvalidEmailException("address", "domain must have at least two labels");
        }
        for (String label : labels) {
            if (!DOMAIN_LABEL.matcher(label).matches()) {
                throw new InvalidEmailException("address", "domain is not a valid host name");
            }
        }
        if (labels[labels.length - 1].chars().allMatch(Character::isDigit)) {
            throw new InvalidEmailException("address", "domain must not be an IP address");
        }
        String normalised = local + "@" + domain;
        try {
            // A second opinion from the library that will put the address on the wire.
            new InternetAddress(normalised, true).validate();
        } catch (AddressException e) {
            throw new InvalidEmailException("address", "rejected by the strict RFC 822 parser");
        }
        return normalised;
    }
}
