"""The platform operations: what the CLI and the library do with a store.

    push         push and pull: rows from files or stdin to a store and back, streamed,
                 `privileged` stripped and the publish gate asked on the way up
    cut          training data out of scored traces: a train set and a held-out set
    purge        clean up what accumulated: an agent's everything, or small datasets
    login        the device login, client side: ask for a code, poll until approved

They sit above the stages because they ask them (the publish gate, the hack scan,
calibration), while the store they run against (`store/`) sits below every stage.
"""
