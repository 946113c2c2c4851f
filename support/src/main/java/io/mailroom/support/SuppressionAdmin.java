package io.mailroom.support;

import io.mailroom.delivery.Addresses;
import io.mailroom.delivery.suppression.SuppressionException;
import io.mailroom.delivery.suppression.SuppressionList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.function.Supplier;

/**
 * The suppression list as support sees it: list it, suppress an address by hand, lift a suppression.
 * Changes need the support role and are audited by the list in the same transaction; the list's
 * refusals become the surfaces' answers (400 naming the field, 409 for a conflict).
 */
final class SuppressionAdmin {

    private static final Logger log = LoggerFactory.getLogger(SuppressionAdmin.class);

    private final SupportTx db;
    private final SuppressionList suppressionList;

    SuppressionAdmin(SupportTx db, SuppressionList suppressionList) {
        this.db = db;
        this.suppressionList = suppressionList;
    }

    /** The suppression list, newest first: active entries, or with {@code withLifted} their history too. */
    public List<SuppressionView> suppressions(String address, boolean withLifted, String before, String limit) {
        Long beforeId = Params.optionalId(SupportParams.BEFORE, before);
        int n = Params.limit(SupportParams.LIMIT, limit);
        return db.read(tx -> suppressionCall(() -> suppressionList.list(tx, blankToNull(address), withLifted, beforeId, n)))
                .stream().map(SuppressionView::of).toList();
    }

    /** Suppresses an address by hand, with a reason; audited in the same transaction. */
    public SuppressionView suppress(Actor actor, String address, String reason) {
        Roles.require(actor, Role.SUPPORT);
        SuppressionView added = db.write(tx -> SuppressionView.of(suppressionCall(
                () -> suppressionList.add(tx, address, reason, actor.name(), actor.role().word()))));
        log.info("{} suppressed by {} ({})", Addresses.masked(added.address()), actor.name(), actor.role().word());
        return added;
    }

    /** Lifts every active suppression of an address, with a reason; audited in the same transaction. */
    public List<SuppressionView> liftSuppression(Actor actor, String address, String reason) {
        Roles.require(actor, Role.SUPPORT);
        return db.write(tx -> suppressionCall(() -> suppressionList.lift(tx, address, reason, actor.name(), actor.role().word())))
                .stream().map(SuppressionView::of).toList();
    }

    /** The list's refusals as the support surfaces answer them: 400 naming the field, or 409. */
    private static <T> T suppressionCall(Supplier<T> call) {
        try {
            return call.get();
        } catch (SuppressionException e) {
            if (e.conflict()) {
                throw new HttpFailure(409, "conflict", e.getMessage(), e.field());
            }
            throw new InvalidParameterException(e.field(), e.getMessage());
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
