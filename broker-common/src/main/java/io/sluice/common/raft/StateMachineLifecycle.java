package io.sluice.common.raft;

import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.util.LifeCycle;

/**
 * The life-cycle moves Ratis expects of a state machine around a snapshot install: it reloads the machine only if
 * {@code pause()} left it PAUSED (otherwise the group's applier fails an assertion and closes the division), and it
 * applies entries again once {@code reinitialize()} brought it back to RUNNING. {@code pause()} is called once per
 * installed chunk, so every move here is idempotent.
 */
public final class StateMachineLifecycle {
    private StateMachineLifecycle() {
    }

    /** From {@code initialize}: NEW to RUNNING. */
    public static void started(BaseStateMachine machine) {
        LifeCycle life = machine.getLifeCycle();
        if (life.getCurrentState() == LifeCycle.State.NEW) {
            life.transition(LifeCycle.State.STARTING);
            life.transition(LifeCycle.State.RUNNING);
        }
    }

    /** From {@code pause}: RUNNING to PAUSED. */
    public static void paused(BaseStateMachine machine) {
        LifeCycle life = machine.getLifeCycle();
        if (life.getCurrentState() == LifeCycle.State.RUNNING) {
            life.transition(LifeCycle.State.PAUSING);
            life.transition(LifeCycle.State.PAUSED);
        }
    }

    /** From {@code reinitialize}: PAUSED back to RUNNING. */
    public static void resumed(BaseStateMachine machine) {
        LifeCycle life = machine.getLifeCycle();
        if (life.getCurrentState() == LifeCycle.State.PAUSED) {
            life.transition(LifeCycle.State.STARTING);
            life.transition(LifeCycle.State.RUNNING);
        }
    }
}
