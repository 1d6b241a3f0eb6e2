// A handler module that throws while it is imported: a pool that loads it cannot start.
throw new Error('this module is broken on purpose')
