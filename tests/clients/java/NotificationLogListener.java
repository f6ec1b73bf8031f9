// The notification log writer of the HMS tests' metastore.
//
// Hive ships its notification log writer (DbNotificationListener) in the hcatalog
// server-extensions jar, which pyspark's wheel does not bundle and no registry this project
// uses serves. This listener does what that one does for the events metacache reads: after each
// metastore change it builds the message with Hive's own MessageFactory (JSONMessageFactory,
// format "json-0.2") and appends the event to the metastore's NOTIFICATION_LOG through the
// RawStore, which numbers it from NOTIFICATION_SEQUENCE. get_next_notification and
// get_current_notificationEventId then serve it as they serve DbNotificationListener's.
//
// Compiled by crates/metacache/tests/hms_catalog.rs against pyspark's jars and loaded with
//   -Dhive.metastore.event.listeners=metacache.test.NotificationLogListener

package metacache.test;

import java.util.Collections;
import java.util.Iterator;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStore.HMSHandler;
import org.apache.hadoop.hive.metastore.MetaStoreEventListener;
import org.apache.hadoop.hive.metastore.api.Database;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.api.NotificationEvent;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.events.AddPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterTableEvent;
import org.apache.hadoop.hive.metastore.events.CreateDatabaseEvent;
import org.apache.hadoop.hive.metastore.events.CreateTableEvent;
import org.apache.hadoop.hive.metastore.events.DropDatabaseEvent;
import org.apache.hadoop.hive.metastore.events.DropPartitionEvent;
import org.apache.hadoop.hive.metastore.events.DropTableEvent;
import org.apache.hadoop.hive.metastore.events.ListenerEvent;
import org.apache.hadoop.hive.metastore.messaging.MessageFactory;
import org.apache.hadoop.hive.metastore.messaging.PartitionFiles;

public class NotificationLogListener extends MetaStoreEventListener {
    private static final Object LOCK = new Object();
    private final MessageFactory messages = MessageFactory.getInstance();

    public NotificationLogListener(Configuration conf) {
        super(conf);
    }

    @Override
    public void onCreateDatabase(CreateDatabaseEvent e) throws MetaException {
        Database db = e.getDatabase();
        log(e, MessageFactory.CREATE_DATABASE_EVENT, db.getName(), null,
                messages.buildCreateDatabaseMessage(db).toString());
    }

    @Override
    public void onDropDatabase(DropDatabaseEvent e) throws MetaException {
        Database db = e.getDatabase();
        log(e, MessageFactory.DROP_DATABASE_EVENT, db.getName(), null,
                messages.buildDropDatabaseMessage(db).toString());
    }

    @Override
    public void onCreateTable(CreateTableEvent e) throws MetaException {
        Table t = e.getTable();
        Iterator<String> files = Collections.emptyIterator();
        log(e, MessageFactory.CREATE_TABLE_EVENT, t.getDbName(), t.getTableName(),
                messages.buildCreateTableMessage(t, files).toString());
    }

    @Override
    public void onAlterTable(AlterTableEvent e) throws MetaException {
        Table before = e.getOldTable();
        log(e, MessageFactory.ALTER_TABLE_EVENT, before.getDbName(), before.getTableName(),
                messages.buildAlterTableMessage(before, e.getNewTable()).toString());
    }

    @Override
    public void onDropTable(DropTableEvent e) throws MetaException {
        Table t = e.getTable();
        log(e, MessageFactory.DROP_TABLE_EVENT, t.getDbName(), t.getTableName(),
                messages.buildDropTableMessage(t).toString());
    }

    @Override
    public void onAddPartition(AddPartitionEvent e) throws MetaException {
        Table t = e.getTable();
        Iterator<PartitionFiles> files = Collections.emptyIterator();
        log(e, MessageFactory.ADD_PARTITION_EVENT, t.getDbName(), t.getTableName(),
                messages.buildAddPartitionMessage(t, e.getPartitionIterator(), files).toString());
    }

    @Override
    public void onAlterPartition(AlterPartitionEvent e) throws MetaException {
        Table t = e.getTable();
        log(e, MessageFactory.ALTER_PARTITION_EVENT, t.getDbName(), t.getTableName(),
                messages.buildAlterPartitionMessage(t, e.getOldPartition(), e.getNewPartition()).toString());
    }

    @Override
    public void onDropPartition(DropPartitionEvent e) throws MetaException {
        Table t = e.getTable();
        Iterator<Partition> partitions = e.getPartitionIterator();
        log(e, MessageFactory.DROP_PARTITION_EVENT, t.getDbName(), t.getTableName(),
                messages.buildDropPartitionMessage(t, partitions).toString());
    }

    private void log(ListenerEvent source, String type, String db, String table, String message)
            throws MetaException {
        if (!source.getStatus()) {
            return; // the change failed: nothing happened
        }
        NotificationEvent event = new NotificationEvent(0, (int) (System.currentTimeMillis() / 1000), type, message);
        event.setDbName(db);
        if (table != null) {
            event.setTableName(table);
        }
        event.setMessageFormat(messages.getMessageFormat());
        synchronized (LOCK) {
            HMSHandler.getMSForConf(getConf()).addNotificationEvent(event);
        }
    }
}
