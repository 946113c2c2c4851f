package io.mailroom.email;

import io.mailroom.mailbox.MailboxRules;
import jakarta.mail.internet.AddressException;
import jakarta.mail.internet.InternetAddress;

/**
 * One mailbox: a bare address plus an optional display name, valid by construction.
 *
 * <p>What is valid is decided by {@link MailboxRules}, the same class the order API checks orders
 * with, so an order it accepted always renders: a plain ASCII dot-atom address of at most
 * {@value MailboxRules#MAX_ADDRESS_LENGTH} characters (the domain is lower-cased), and a display
 * name without control, line-separator or bidi characters of at most
 * {@value MailboxRules#MAX_DISPLAY_NAME_LENGTH} characters. A blank display name means none; a
 * given one is stripped.
 */
public record EmailAddress(String address, String displayName) {

    public static final int MAX_ADDRESS_LENGTH = MailboxRules.MAX_ADDRESS_LENGTH;
    public static final int MAX_LOCAL_PART_LENGTH = MailboxRules.MAX_LOCAL_PART_LENGTH;
    public static final int MAX_DISPLAY_NAME_LENGTH = MailboxRules.MAX_DISPLAY_NAME_LENGTH;

    public EmailAddress {
        String addressValue = address;
        MailboxRules.addressProblem(addressValue).ifPresent(problem -> {
            throw new InvalidEmailException("address", problem);
        });
        address = MailboxRules.normaliseAddress(addressValue);
        if (displayName != null) {
            if (displayName.isBlank()) {
                displayName = null;
            } else {
                String name = displayName;
                MailboxRules.displayNameProblem(name).ifPresent(problem -> {
                    throw new InvalidEmailException("displayName", problem);
                });
                displayName = name.strip();
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
}
