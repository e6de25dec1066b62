<?php
// Reads base64 lines of serialize() output, one value each; for each it
// writes a line: base64 of serialize(unserialize(value)), or "ERR" if
// PHP refuses the value.
ini_set('serialize_precision', '-1');
while (($line = fgets(STDIN)) !== false) {
    $in = base64_decode(trim($line), true);
    $v = @unserialize($in);
    if ($v === false && $in !== 'b:0;') {
        echo "ERR\n";
        continue;
    }
    echo base64_encode(serialize($v)), "\n";
}
