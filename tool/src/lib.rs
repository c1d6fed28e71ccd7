//! libkrphase.so (filled by the tool issue).
