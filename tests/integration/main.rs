mod lint;
