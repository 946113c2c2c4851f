package io.mailroom.outbox.runtime;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** How a producer groups the topics it claims without a limit into claims ({@link Producer#claimSets}). */
class ClaimSetsTest {

    @Test
    void allOfItsTopicsAreOneClaim() {
        assertThat(Producer.claimSets(List.of("a", "b", "c"), 3, 7)).containsExactly(List.of("a", "b", "c"));
    }

    @Test
    void oneTopicIsOneClaim() {
        assertThat(Producer.claimSets(List.of("b"), 3, 7)).containsExactly(List.of("b"));
    }

    @Test
    void nothingToClaimIsNoClaim() {
        assertThat(Producer.claimSets(List.of(), 3, 0)).isEmpty();
    }

    @Test
    void whileSomeAreLeftOutEachTopicIsAClaimOfItsOwn() {
        assertThat(Producer.claimSets(List.of("a", "b"), 3, 0)).containsExactly(List.of("a"), List.of("b"));
    }

    @Test
    void theFirstTopicMovesOnEachRound() {
        List<String> unlimited = List.of("a", "b", "c");
        assertThat(Producer.claimSets(unlimited, 4, 0)).containsExactly(List.of("a"), List.of("b"), List.of("c"));
        assertThat(Producer.claimSets(unlimited, 4, 1)).containsExactly(List.of("b"), List.of("c"), List.of("a"));
        assertThat(Producer.claimSets(unlimited, 4, 2)).containsExactly(List.of("c"), List.of("a"), List.of("b"));
        assertThat(Producer.claimSets(unlimited, 4, -1)).as("the round counter wrapped").containsExactly(
                List.of("c"), List.of("a"), List.of("b"));
    }
}
