"""The file system: vault paths, the one writer, the journal, the executor and recovery, the
state directory and its small stores."""
