import sys

from surrogait_train.ppo.cli import main

sys.exit(main())
